-- Where insert mode begins, the server hears of it (`redraft/cursor`): it answers that place
-- at once, so the context there is encoded before the first keystroke, which then costs what
-- typing on costs instead of encoding the whole context.

local M = {}

---@param bufnr integer
function M.announce(bufnr)
  if not require('redraft.config').get().announce_cursor or bufnr ~= vim.api.nvim_get_current_buf() then
    return
  end
  local server = require('redraft.server')
  local client = server.client(bufnr)
  if client and server.offers(client, 'notifications', 'redraft/cursor') then
    client:notify('redraft/cursor', vim.lsp.util.make_position_params(0, client.offset_encoding))
  end
end

return M
