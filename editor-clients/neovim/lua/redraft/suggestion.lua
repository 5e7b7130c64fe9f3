-- The ghost-text state machine: ask the server (debounced while typing, or on demand),
-- keep the answer's candidates, follow the user's typing through them, accept all or part,
-- cycle, dismiss. At most one suggestion exists at a time, in the current buffer.

local config = require('redraft.config')
local feedback = require('redraft.feedback')
local ghost = require('redraft.ghost')
local items = require('redraft.items')
local server = require('redraft.server')

local M = {}

local METHOD = 'textDocument/inlineCompletion'

---InlineCompletionTriggerKind (LSP 3.18).
M.INVOKED = 1
M.AUTOMATIC = 2

---@class redraft.State
---@field bufnr integer
---@field client_id integer
---@field candidates redraft.Candidate[]
---@field index integer        Candidate shown.
---@field invoked boolean      Came from an Invoked request (all candidates already asked for).
---@field origin_row integer   Cursor (0-based row, byte col) the server answered for.
---@field origin_col integer
---@field row integer          Where the not-yet-inserted rest of the candidate starts.
---@field col integer
---@field consumed string      Part of the candidate already typed or accepted.
---@field accepted boolean     Some of it was accepted with a key (for feedback).

---The suggestion being shown (or hidden under the popup menu), nil when there is none.
---@type redraft.State|nil
M.state = nil

---Answers received (shown or not), so callers can tell a request was answered.
M.answers = 0

---The request in flight, so a newer one can cancel it and a stale answer is ignored.
---@type { client_id: integer, id: integer }|nil
local pending = nil

---@type uv.uv_timer_t|nil
local timer = nil

local function in_insert_mode()
  return vim.api.nvim_get_mode().mode:sub(1, 1) == 'i'
end

local function cursor()
  local pos = vim.api.nvim_win_get_cursor(0)
  return pos[1] - 1, pos[2]
end

local function cancel_pending()
  if timer then
    timer:stop()
  end
  if pending then
    local client = vim.lsp.get_client_by_id(pending.client_id)
    if client then
      client:cancel_request(pending.id)
    end
    pending = nil
  end
end

---The not-yet-inserted rest of the shown candidate.
---@return string
function M.remaining()
  local s = M.state
  if not s then
    return ''
  end
  return s.candidates[s.index].text:sub(#s.consumed + 1)
end

---Draw the current state, or hide it while the popup menu is open (the two would overlap
---and Tab belongs to the menu then).
function M.render()
  local s = M.state
  if not s then
    return
  end
  if vim.fn.pumvisible() == 1 then
    ghost.clear(s.bufnr)
    return
  end
  -- Ghost text wins over a proposed next edit: one suggestion at a time.
  require('redraft.next_edit').yield_to_ghost()
  ghost.show(s.bufnr, s.row, s.col, M.remaining(), s.index, #s.candidates)
end

---Forget the suggestion. `outcome` says what the user did with it: 'accepted' (all or
---part of it), 'rejected', or nil when a newer answer replaced it (no decision to report).
---@param outcome 'accepted'|'rejected'|nil
local function finish(outcome)
  local s = M.state
  if not s then
    return
  end
  M.state = nil
  ghost.clear(s.bufnr)
  if outcome then
    feedback.send(s.client_id, s.bufnr, s.candidates[s.index].item, outcome == 'accepted' or s.accepted)
  end
end

---Hide the suggestion and stop any pending request.
function M.dismiss()
  cancel_pending()
  finish('rejected')
end

---Keep the suggestion in step with the cursor: text typed at its start that matches it is
---"typed through" (the rest stays shown); anything else dismisses it.
function M.sync()
  local s = M.state
  if not s then
    return
  end
  if vim.api.nvim_get_current_buf() ~= s.bufnr or not in_insert_mode() then
    return M.dismiss()
  end
  local row, col = cursor()
  if row ~= s.row or col < s.col then
    return M.dismiss()
  end
  local typed = vim.api.nvim_buf_get_lines(s.bufnr, row, row + 1, false)[1]:sub(s.col + 1, col)
  local rest = M.remaining()
  if typed == '' then
    return M.render()
  end
  if rest:sub(1, #typed) ~= typed then
    return M.dismiss()
  end
  s.consumed, s.col = s.consumed .. typed, col
  if #typed == #rest then
    return finish('accepted') -- typed it all out: as good as accepted
  end
  M.render()
end

---Ask the server for suggestions at the cursor of the current buffer.
---@param kind integer M.AUTOMATIC or M.INVOKED
function M.request(kind)
  cancel_pending()
  local bufnr = vim.api.nvim_get_current_buf()
  local client = server.client(bufnr)
  if not client or not in_insert_mode() then
    return
  end
  local row, col = cursor()
  local tick = vim.b[bufnr].changedtick
  local encoding = client.offset_encoding
  local params = vim.lsp.util.make_position_params(0, encoding)
  params.context = { triggerKind = kind }
  local request_id
  local function on_result(err, result)
    if not pending or pending.id ~= request_id then
      return -- superseded or cancelled
    end
    pending = nil
    M.answers = M.answers + 1
    -- Only an answer for exactly this buffer state is worth showing.
    if err or vim.api.nvim_get_current_buf() ~= bufnr or not in_insert_mode() then
      return
    end
    local now_row, now_col = cursor()
    if vim.b[bufnr].changedtick ~= tick or now_row ~= row or now_col ~= col then
      return
    end
    local line = vim.api.nvim_buf_get_lines(bufnr, row, row + 1, false)[1]
    local candidates = items.from_response(result, row, col, line, encoding)
    if #candidates == 0 then
      return
    end
    finish(nil)
    M.state = {
      bufnr = bufnr,
      client_id = client.id,
      candidates = candidates,
      index = 1,
      invoked = kind == M.INVOKED,
      origin_row = row,
      origin_col = col,
      row = row,
      col = col,
      consumed = '',
      accepted = false,
    }
    M.render()
  end
  local ok, id = client:request(METHOD, params, on_result, bufnr)
  if ok and id then
    request_id = id
    pending = { client_id = client.id, id = id }
  end
end

---Ask again after `debounce_ms` of quiet (called on every change while typing).
function M.schedule()
  if not config.get().auto_trigger then
    return
  end
  timer = timer or assert(vim.uv.new_timer())
  cancel_pending()
  timer:start(config.get().debounce_ms, 0, vim.schedule_wrap(function()
    if not M.state then
      M.request(M.AUTOMATIC)
    end
  end))
end

---Insert `piece` (the start of the remaining text) at the cursor. A full accept also
---replaces what the item's range covered after the cursor.
---@param how 'all'|'word'|'line'
---@return boolean accepted false when there was nothing to accept
function M.accept(how)
  local s = M.state
  if not s or vim.api.nvim_get_current_buf() ~= s.bufnr then
    return false
  end
  local rest = M.remaining()
  local piece = how == 'word' and items.next_word(rest)
    or how == 'line' and items.next_line(rest)
    or rest
  local end_col = s.col
  if #piece == #rest and s.row == s.origin_row then
    -- The replaced range moved right by whatever was typed through since the answer.
    end_col = s.col + (s.candidates[s.index].end_col - s.origin_col)
  end
  local lines = vim.split(piece, '\n', { plain = true })
  vim.api.nvim_buf_set_text(s.bufnr, s.row, s.col, s.row, end_col, lines)
  local row = s.row + #lines - 1
  local col = (#lines == 1 and s.col or 0) + #lines[#lines]
  vim.api.nvim_win_set_cursor(0, { row + 1, col })
  s.consumed, s.accepted, s.row, s.col = s.consumed .. piece, true, row, col
  if #piece == #rest then
    finish('accepted')
  else
    M.render()
  end
  return true
end

---Show the next (`step` 1) or previous (-1) candidate. With only an automatic answer,
---ask for all candidates first (an Invoked request).
---@param step integer
function M.cycle(step)
  local s = M.state
  if not s or (not s.invoked and #s.candidates == 1) then
    return M.request(M.INVOKED)
  end
  -- Skip candidates that disagree with what was already typed or accepted.
  for _ = 1, #s.candidates do
    s.index = (s.index - 1 + step) % #s.candidates + 1
    local text = s.candidates[s.index].text
    if text:sub(1, #s.consumed) == s.consumed and #text > #s.consumed then
      break
    end
  end
  M.render()
end

---@return boolean
function M.is_visible()
  return M.state ~= nil and vim.fn.pumvisible() == 0
end

---Stop the debounce timer and any request (used when disabling).
function M.reset()
  M.dismiss()
  if timer then
    timer:close()
    timer = nil
  end
end

return M
