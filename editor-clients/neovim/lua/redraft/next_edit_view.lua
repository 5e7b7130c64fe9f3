-- Drawing a proposed next edit with extmarks: the text it removes highlighted in place, the
-- text it adds as virtual text right after it (first line inline, the rest as virtual lines),
-- a sign where it starts, and a "next edit: line N" hint at the end of the cursor line while
-- it is off screen. next_edit.lua decides what is shown; this only draws it.

local M = {}

M.ns = vim.api.nvim_create_namespace('redraft_next_edit')

---Is the proposal's row outside the current window's visible lines?
local function off_screen(row)
  return row + 1 < vim.fn.line('w0') or row + 1 > vim.fn.line('w$')
end

-- Virtual text draws a tab as one cell; expand it so indentation lines up.
local function expand_tabs(text, bufnr)
  return (text:gsub('\t', string.rep(' ', vim.bo[bufnr].tabstop)))
end

---Draw `state` (the proposal) in its buffer: removed text highlighted in place, added text
---as virtual text right after it (its first line inline, further lines below), a sign on
---the line where it starts.
---@param state redraft.NextEditState
function M.render(state)
  local bufnr = state.bufnr
  vim.api.nvim_buf_clear_namespace(bufnr, M.ns, 0, -1)
  state.hint = nil
  local start, finish, new_text = state.start, state.finish, state.item.edit.newText
  vim.api.nvim_buf_set_extmark(bufnr, M.ns, start[1], 0, {
    sign_text = '»',
    sign_hl_group = 'RedraftNextEditSign',
  })
  if start[1] ~= finish[1] or start[2] ~= finish[2] then
    vim.api.nvim_buf_set_extmark(bufnr, M.ns, start[1], start[2], {
      end_row = finish[1],
      end_col = finish[2],
      hl_group = 'RedraftNextEditDelete',
      hl_mode = 'combine',
    })
  end
  if new_text == '' then
    return M.update_hint(state)
  end
  local lines = vim.split(new_text, '\n', { plain = true })
  local opts = { right_gravity = false }
  if lines[1] ~= '' then
    opts.virt_text = { { expand_tabs(lines[1], bufnr), 'RedraftNextEditInsert' } }
    opts.virt_text_pos = 'inline'
  end
  if #lines > 1 then
    opts.virt_lines = {}
    for i = 2, #lines do
      opts.virt_lines[#opts.virt_lines + 1] = { { expand_tabs(lines[i], bufnr), 'RedraftNextEditInsert' } }
    end
  end
  vim.api.nvim_buf_set_extmark(bufnr, M.ns, finish[1], finish[2], opts)
  M.update_hint(state)
end

---Show "next edit: line N" at the end of the cursor line while the proposal is outside the
---window's visible lines; remove it once the proposal is in view (called on cursor moves
---and scrolling).
---@param state redraft.NextEditState
function M.update_hint(state)
  if vim.api.nvim_get_current_buf() ~= state.bufnr then
    return
  end
  local row = state.start[1]
  if off_screen(row) then
    local cursor_row = vim.api.nvim_win_get_cursor(0)[1] - 1
    state.hint = vim.api.nvim_buf_set_extmark(state.bufnr, M.ns, cursor_row, 0, {
      id = state.hint,
      virt_text = { { ('  next edit: line %d'):format(row + 1), 'RedraftNextEditHint' } },
      virt_text_pos = 'eol',
    })
  elseif state.hint then
    vim.api.nvim_buf_del_extmark(state.bufnr, M.ns, state.hint)
    state.hint = nil
  end
end

return M
