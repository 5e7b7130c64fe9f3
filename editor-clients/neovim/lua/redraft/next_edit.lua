-- Next edit: after a change (debounced), ask the server's `redraft/nextEdit` where the
-- change naturally continues, and show its top proposal where it applies: the text it
-- removes highlighted, the text it adds as virtual text, a sign on its line, and a hint at
-- the cursor when it is off screen. Normal-mode keys jump there, accept it, or dismiss it;
-- when nothing is shown they do what they did before (the keymaps only act on a proposal).

local config = require('redraft.config')

local M = {}

M.ns = vim.api.nvim_create_namespace('redraft_next_edit')
M.METHOD = 'redraft/nextEdit'

---@class redraft.NextEditState
---@field bufnr integer
---@field client_id integer
---@field item table             the server's item: { id, textDocument, edit = { range, newText }, confidence }
---@field start integer[]        { row, byte col } of the range's start (0-based)
---@field finish integer[]       { row, byte col } of its end

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
  return { position.line, ok and col or #line }
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
    client:notify('redraft/feedback', { id = state.item.id, accepted = accepted })
  end
end

---Is the proposal's row outside the current window's visible lines?
local function off_screen(row)
  return row + 1 < vim.fn.line('w0') or row + 1 > vim.fn.line('w$')
end

---Draw `state` (the proposal) in its buffer.
local function render(state)
  local bufnr = state.bufnr
  vim.api.nvim_buf_clear_namespace(bufnr, M.ns, 0, -1)
  local start, finish, new_text = state.start, state.finish, state.item.edit.newText
  if start[1] ~= finish[1] or start[2] ~= finish[2] then
    vim.api.nvim_buf_set_extmark(bufnr, M.ns, start[1], start[2], {
      end_row = finish[1],
      end_col = finish[2],
      hl_group = 'RedraftNextEditDelete',
      hl_mode = 'combine',
    })
  end
  local lines = vim.split(new_text, '\n', { plain = true })
  local opts = { right_gravity = false, sign_text = '»', sign_hl_group = 'RedraftNextEditSign' }
  if lines[1] ~= '' then
    opts.virt_text = { { lines[1], 'RedraftNextEditInsert' } }
    opts.virt_text_pos = 'inline'
  end
  if #lines > 1 then
    opts.virt_lines = {}
    for i = 2, #lines do
      opts.virt_lines[#opts.virt_lines + 1] = { { lines[i], 'RedraftNextEditInsert' } }
    end
  end
  vim.api.nvim_buf_set_extmark(bufnr, M.ns, finish[1], finish[2], opts)
  local cursor_row = vim.api.nvim_win_get_cursor(0)[1] - 1
  if vim.api.nvim_get_current_buf() == bufnr and off_screen(start[1]) then
    vim.api.nvim_buf_set_extmark(bufnr, M.ns, cursor_row, 0, {
      virt_text = { { ('  next edit: line %d'):format(start[1] + 1), 'RedraftNextEditHint' } },
      virt_text_pos = 'eol',
    })
  end
end

---Show `item` from `client_id` in `bufnr` if it still applies to the buffer as it is.
---@return boolean shown
function M.show(bufnr, client_id, item)
  local client = vim.lsp.get_client_by_id(client_id)
  if not client or not vim.api.nvim_buf_is_valid(bufnr) or type(item) ~= 'table' or type(item.edit) ~= 'table' then
    return false
  end
  -- The server answered about an older text: its range may no longer be where it says.
  local version = item.textDocument and item.textDocument.version
  if version ~= nil and version ~= vim.NIL and version ~= vim.lsp.util.buf_versions[bufnr] then
    return false
  end
  if require('redraft.suggestion').is_visible() then
    return false -- ghost text at the cursor wins
  end
  local range = item.edit.range
  clear()
  M.state = {
    bufnr = bufnr,
    client_id = client_id,
    item = item,
    start = to_byte_position(bufnr, range.start, client.offset_encoding),
    finish = to_byte_position(bufnr, range['end'], client.offset_encoding),
  }
  render(M.state)
  return true
end

---Ask the server now about `bufnr` at the cursor.
---@param bufnr integer
function M.request(bufnr)
  local client = require('redraft.server').client(bufnr)
  if not client or not vim.api.nvim_buf_is_valid(bufnr) or bufnr ~= vim.api.nvim_get_current_buf() then
    return
  end
  if pending then
    local previous = vim.lsp.get_client_by_id(pending.client_id)
    if previous then
      previous:cancel_request(pending.request_id)
    end
    pending = nil
  end
  local params = vim.lsp.util.make_position_params(0, client.offset_encoding)
  local ok, request_id = client:request(M.METHOD, params, function(err, result)
    pending = nil
    M.answers = M.answers + 1
    if err or type(result) ~= 'table' or type(result.items) ~= 'table' or #result.items == 0 then
      return
    end
    M.show(bufnr, client.id, result.items[1])
  end, bufnr)
  if ok and request_id then
    pending = { client_id = client.id, request_id = request_id }
  end
end

---A change happened: the shown proposal is stale; ask again once the user pauses.
---@param bufnr integer
function M.on_change(bufnr)
  clear()
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
  render(state) -- the off-screen hint goes away
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
  if not client then
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
