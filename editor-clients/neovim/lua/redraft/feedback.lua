-- What the user did with a suggestion, told back to the server that made it.

local config = require('redraft.config')

local M = {}

-- The id a server gave an item so it can hear back about it: `id`, `data.id`, or the
-- argument of the Redraft server's accept command.
local function item_id(item)
  if item.id ~= nil then
    return item.id
  end
  if type(item.data) == 'table' and item.data.id ~= nil then
    return item.data.id
  end
  local command = item.command
  if type(command) == 'table' and command.command == 'redraft.accepted' and type(command.arguments) == 'table' then
    return command.arguments[1]
  end
end

-- Tell the server what became of the item it proposed. On accept, LSP says to run the
-- item's command (the Redraft server counts the accept there); without a command, or on
-- rejection, send `redraft/feedback` if the item has an id. Fire-and-forget, never waited on.
---@param client_id integer
---@param bufnr integer
---@param item table  the server's InlineCompletionItem
---@param accepted boolean
function M.send(client_id, bufnr, item, accepted)
  local client = vim.lsp.get_client_by_id(client_id)
  if not config.get().feedback or not client then
    return
  end
  if accepted and type(item.command) == 'table' then
    client:exec_cmd(item.command, { bufnr = bufnr }, function() end)
    return
  end
  local id = item_id(item)
  if id ~= nil then
    M.notify(client, id, accepted)
  end
end

---`redraft/feedback` for the item the server called `id`, if the server offers it (the
---caller has checked the `feedback` option).
---@param client vim.lsp.Client
---@param id any
---@param accepted boolean
function M.notify(client, id, accepted)
  if require('redraft.server').offers(client, 'notifications', 'redraft/feedback') then
    client:notify('redraft/feedback', { id = id, accepted = accepted })
  end
end

return M
