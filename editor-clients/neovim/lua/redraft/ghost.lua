-- Drawing a suggestion as ghost text: the first line inline at the cursor (pushing the
-- rest of the line right, where it will end up once accepted), further lines as virtual
-- lines below, and a "2/3" marker when there are several candidates.

local M = {}

M.ns = vim.api.nvim_create_namespace('redraft_ghost')

-- Virtual text draws a tab as a single cell; expand it so indentation lines up.
local function expand_tabs(text, bufnr)
  return (text:gsub('\t', string.rep(' ', vim.bo[bufnr].tabstop)))
end

---@param bufnr integer
function M.clear(bufnr)
  if vim.api.nvim_buf_is_valid(bufnr) then
    vim.api.nvim_buf_clear_namespace(bufnr, M.ns, 0, -1)
  end
end

---Show `text` at 0-based `row`, byte `col`; `index`/`count` feed the candidate marker.
---@param bufnr integer
---@param row integer
---@param col integer
---@param text string
---@param index integer
---@param count integer
function M.show(bufnr, row, col, text, index, count)
  M.clear(bufnr)
  local lines = vim.split(text, '\n', { plain = true })
  local opts = { hl_mode = 'combine', right_gravity = false }
  if lines[1] ~= '' then
    opts.virt_text = { { expand_tabs(lines[1], bufnr), 'RedraftSuggestion' } }
    opts.virt_text_pos = 'inline'
  end
  if #lines > 1 then
    opts.virt_lines = {}
    for i = 2, #lines do
      opts.virt_lines[#opts.virt_lines + 1] = { { expand_tabs(lines[i], bufnr), 'RedraftSuggestion' } }
    end
  end
  vim.api.nvim_buf_set_extmark(bufnr, M.ns, row, col, opts)
  if count > 1 then
    vim.api.nvim_buf_set_extmark(bufnr, M.ns, row, 0, {
      virt_text = { { (' %d/%d'):format(index, count), 'RedraftAnnotation' } },
      virt_text_pos = 'eol',
    })
  end
end

---The text currently drawn (inline part and virtual lines joined by newlines), or nil.
---Used by tests and :Redraft status to see what the user sees.
---@param bufnr integer
---@return string|nil
function M.shown_text(bufnr)
  for _, mark in ipairs(vim.api.nvim_buf_get_extmarks(bufnr, M.ns, 0, -1, { details = true })) do
    local details = mark[4]
    if details.virt_text_pos == 'inline' or details.virt_lines then
      local parts = { details.virt_text_pos == 'inline' and details.virt_text[1][1] or '' }
      for _, chunks in ipairs(details.virt_lines or {}) do
        parts[#parts + 1] = chunks[1][1]
      end
      return table.concat(parts, '\n')
    end
  end
  return nil
end

return M
