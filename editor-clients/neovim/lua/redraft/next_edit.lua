-- Next edit: after a change (debounced), ask the server's `redraft/nextEdit` where the
-- change naturally continues, and show its top proposal where it applies: the text it
-- removes highlighted, the text it adds as virtual text, a sign on its line, and a hint at
-- the end of the cursor line while it is off screen. Normal-mode keys jump there, accept it,
-- or dismiss it; when nothing is shown they do what they did before (see keymaps.lua).
-- Ghost text wins: a proposal is not shown while ghost text is, and ghost text drawn later
-- replaces it.

local config = require('redraft.config')
local view = require('redraft.next_edit_view')

local M = {}

M.ns = view.ns
M.METHOD = 'redraft/nextEdit'

---@class redraft.NextEditState
---@field bufnr integer
---@field client_id integer
---@field item table             the server's item: { id, textDocument, edit = { range, newText }, confidence }
---@field start integer[]        { row, byte col } of the range's start (0-based)
---@field finish integer[]       { row, byte col } of its end
---@field hint integer|nil       extmark id of the off-screen hint, moved as the cursor and view move

---The proposal on screen, or nil.
---@type redraft.NextEditState|nil
M.state = nil

---Answers received so far (tests wait on it).
M.answers = 0

local timer = nil
local pending = nil ---@type { client_id: integer, request_id: integer }|nil

-- LSP position → 0-based { row, byte col } in `bufnr`, with the client's encoding.
local function to_byte_position(bufnr, position, encoding)
  local line = vim.api.nvim_buf_get_lines(bufnr, position.line, position.line + 1, false)[1]
  if line == nil then -- past the last line: its end
    local count = vim.api.nvim_buf_line_count(bufnr)
    local last = vim.api.nvim_buf_get_lines(bufnr, count - 1, count, false)[1] or ''
    return { count - 1, #last }
  end
  local ok, col = pcall(vim.str_byteindex, line, encoding, position.character, false)
  return { position.line, ok and math.min(col, #line) or #line }
end

local function is_position(p)
  return type(p) == 'table' and type(p.line) == 'number' and type(p.character) == 'number'
end

-- An item worth drawing: a text edit with a well-formed range.
local function is_edit_item(item)
  local edit = type(item) == 'table' and item.edit
  return type(edit) == 'table'
    and type(edit.newText) == 'string'
    and type(edit.range) == 'table'
    and is_position(edit.range.start)
    and is_position(edit.range['end'])
end

-- The item's document version, or nil when the server didn't say.
local function item_version(item)
  local version = type(item.textDocument) == 'table' and item.textDocument.version or nil
  return type(version) == 'number' and version or nil
end

local function is_stale(bufnr, item)
  local version = item_version(item)
  return version ~= nil and version ~= vim.lsp.util.buf_versions[bufnr]
end

local function cancel_pending()
  if pending then
    local client = vim.lsp.get_client_by_id(pending.client_id)
    if client then
      client:cancel_request(pending.request_id)
    end
    pending = nil
  end
end

local function clear()
  local state = M.state
  M.state = nil
  if state and vim.api.nvim_buf_is_valid(state.bufnr) then
    vim.api.nvim_buf_clear_namespace(state.bufnr, M.ns, 0, -1)
  end
end

local function feedback(state, accepted)
  local client = vim.lsp.get_client_by_id(state.client_id)
  if client and config.get().feedback and state.item.id ~= nil then
    require('redraft.feedback').notify(client, state.item.id, accepted)
  end
end

---Show `item` from `client_id` in `bufnr` if it still applies to the buffer as it is.
---@return boolean shown
function M.show(bufnr, client_id, item)
  if bufnr == 0 then
    bufnr = vim.api.nvim_get_current_buf()
  end
  local client = vim.lsp.get_client_by_id(client_id)
  if not client or not vim.api.nvim_buf_is_valid(bufnr) or not is_edit_item(item) then
    return false
  end
  -- The server answered about an older text: its range may no longer be where it says.
  if is_stale(bufnr, item) then
    return false
  end
  if require('redraft.suggestion').is_visible() then
    return false -- ghost text at the cursor wins
  end
  local range = item.edit.range
  clear()
  -- Buffer lines hold no line breaks: a dos buffer's \r\n would be drawn as ^M (applying
  -- the edit drops them either way).
  item = vim.tbl_extend('force', item, {
    edit = vim.tbl_extend('force', item.edit, { newText = (item.edit.newText:gsub('\r\n?', '\n')) }),
  })
  M.state = {
    bufnr = bufnr,
    client_id = client_id,
    item = item,
    start = to_byte_position(bufnr, range.start, client.offset_encoding),
    finish = to_byte_position(bufnr, range['end'], client.offset_encoding),
  }
  view.render(M.state)
  return true
end

---Show or move or drop the off-screen hint (on cursor moves and scrolling).
function M.update_hint()
  if M.state then
    view.update_hint(M.state)
  end
end

---Ghost text is being drawn: it wins, the proposal goes (no feedback: nobody decided).
function M.yield_to_ghost()
  clear()
end

---Ask the server now about `bufnr` (0: the current buffer) at the cursor.
---@param bufnr integer
function M.request(bufnr)
  if bufnr == 0 then
    bufnr = vim.api.nvim_get_current_buf()
  end
  local server = require('redraft.server')
  local client = server.client(bufnr)
  if not client or not vim.api.nvim_buf_is_valid(bufnr) or bufnr ~= vim.api.nvim_get_current_buf()
    or not server.offers(client, 'requests', M.METHOD) then
    return
  end
  cancel_pending()
  local params = vim.lsp.util.make_position_params(0, client.offset_encoding)
  local request_id
  local ok, id = client:request(M.METHOD, params, function(err, result)
    if not pending or pending.request_id ~= request_id then
      return -- cancelled or superseded by a newer request
    end
    pending = nil
    M.answers = M.answers + 1
    if err or type(result) ~= 'table' or type(result.items) ~= 'table' then
      return
    end
    -- Most confident first: show the first one that still applies.
    for _, item in ipairs(result.items) do
      if M.show(bufnr, client.id, item) then
        return
      end
    end
  end, bufnr)
  if ok and id then
    request_id = id
    pending = { client_id = client.id, request_id = id }
  end
end

---A change happened: the shown proposal is stale; ask again once the user pauses.
---@param bufnr integer
function M.on_change(bufnr)
  clear()
  cancel_pending() -- its answer would be about the text before this change
  local opts = config.get().next_edit
  if not opts.enabled then
    return
  end
  if timer then
    timer:stop()
  else
    timer = assert(vim.uv.new_timer())
  end
  timer:start(opts.debounce_ms, 0, vim.schedule_wrap(function()
    M.request(bufnr)
  end))
end

---Move the cursor to the proposal. Returns false when none is shown.
function M.jump()
  local state = M.state
  if not state or state.bufnr ~= vim.api.nvim_get_current_buf() then
    return false
  end
  vim.cmd("normal! m'") -- so <C-o> comes back
  vim.api.nvim_win_set_cursor(0, { state.start[1] + 1, state.start[2] })
  view.render(state) -- the off-screen hint goes away
  return true
end

---Apply the proposal (with the client's offset encoding) and put the cursor after it.
function M.accept()
  local state = M.state
  if not state or state.bufnr ~= vim.api.nvim_get_current_buf() then
    return false
  end
  local client = vim.lsp.get_client_by_id(state.client_id)
  clear()
  -- Changed since it was drawn (normally a change hides it first): its range is unreliable.
  if not client or is_stale(state.bufnr, state.item) then
    return false
  end
  vim.lsp.util.apply_text_edits({ state.item.edit }, state.bufnr, client.offset_encoding)
  local added = vim.split(state.item.edit.newText, '\n', { plain = true })
  local row = state.start[1] + #added - 1
  local col = (#added == 1 and state.start[2] or 0) + #added[#added]
  local last = vim.api.nvim_buf_line_count(state.bufnr) - 1
  row = math.min(row, last)
  local line = vim.api.nvim_buf_get_lines(state.bufnr, row, row + 1, false)[1] or ''
  vim.api.nvim_win_set_cursor(0, { row + 1, math.min(col, math.max(#line - 1, 0)) })
  feedback(state, true)
  return true
end

---Hide the proposal and tell the server it was not wanted.
function M.dismiss()
  local state = M.state
  if not state then
    return false
  end
  clear()
  feedback(state, false)
  return true
end

---Forget everything (disable, detach).
function M.reset()
  if timer then
    timer:stop()
  end
  cancel_pending()
  clear()
end

---The proposal as text, for tests and :Redraft status: what it removes and adds.
---@return { row: integer, removed: string, added: string }|nil
function M.describe()
  local state = M.state
  if not state then
    return nil
  end
  local removed = vim.api.nvim_buf_get_text(state.bufnr, state.start[1], state.start[2], state.finish[1],
    state.finish[2], {})
  return { row = state.start[1], removed = table.concat(removed, '\n'), added = state.item.edit.newText }
end

return M
