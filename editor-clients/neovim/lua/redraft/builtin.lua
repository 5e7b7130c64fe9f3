-- `inline_completion = 'builtin'`: Neovim 0.12's own `vim.lsp.inline_completion` draws the
-- server's items instead of this plugin's ghost text, and the plugin's keys drive it (accept,
-- cycle). Older versions don't have it: say so once and let the plugin draw them.

local M = {}

---Buffers where the built-in inline completion is on because of us.
---@type table<integer, true>
local active = {}

M.NEEDS = "redraft: inline_completion = 'builtin' needs Neovim 0.12 (vim.lsp.inline_completion); using the plugin's ghost text"

---Is the option set and the API there? Says once when the option can't be honoured.
---@return boolean
function M.wanted()
  if require('redraft.config').get().inline_completion ~= 'builtin' then
    return false
  end
  if vim.lsp.inline_completion == nil then
    vim.notify_once(M.NEEDS, vim.log.levels.WARN)
    return false
  end
  return true
end

---Turn the built-in inline completion on for `bufnr`.
---@param bufnr integer
function M.enable(bufnr)
  vim.lsp.inline_completion.enable(true, { bufnr = bufnr })
  active[bufnr] = true
end

---Turn it off again (the server detached or Redraft was disabled).
---@param bufnr integer
function M.disable(bufnr)
  if active[bufnr] then
    active[bufnr] = nil
    if vim.api.nvim_buf_is_valid(bufnr) then
      pcall(vim.lsp.inline_completion.enable, false, { bufnr = bufnr })
    end
  end
end

---@param bufnr integer
---@return boolean
function M.is_active(bufnr)
  return active[bufnr] == true
end

---Accept the shown candidate; false when there is none (the key then does what it did
---before). The built-in runs the item's command, so the server still hears of the accept.
---@param bufnr integer
---@return boolean
function M.accept(bufnr)
  if vim.fn.pumvisible() == 1 then
    return false
  end
  return vim.lsp.inline_completion.get({ bufnr = bufnr }) == true
end

---Show the next (1) or previous (-1) candidate.
---@param bufnr integer
---@param count integer
---@return boolean
function M.select(bufnr, count)
  if vim.fn.pumvisible() == 1 then
    return false
  end
  vim.lsp.inline_completion.select({ bufnr = bufnr, count = count })
  return true
end

return M
