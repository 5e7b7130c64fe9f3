-- Buffer-local keys: insert-mode keys for ghost text, normal-mode keys for next edits. A key
-- acts only when it has something to act on (a shown suggestion and no popup menu, a shown
-- proposal); otherwise it does exactly what it did before Redraft mapped it: the mapping it
-- shadows, or the key's built-in meaning. With `inline_completion = 'builtin'` (Neovim
-- 0.12) accept and next/prev drive Neovim's own inline completion; the other ghost-text
-- keys have nothing of ours to act on there and fall back.

local builtin = require('redraft.builtin')
local config = require('redraft.config')
local suggestion = require('redraft.suggestion')

local M = {}

---Mappings this plugin set, per buffer: lhs → the mapping it shadowed (maparg() dict).
---@type table<integer, table<string, table>>
local installed = {}

-- Do what `lhs` did before we mapped it. Keys go to the front of the typeahead, where a
-- plain key press would have been, so text typed after it stays in order.
local function fallback(lhs, prev)
  if vim.tbl_isempty(prev) then
    vim.api.nvim_feedkeys(vim.keycode(lhs), 'nit', false)
    return
  end
  local keys
  if prev.callback then
    keys = prev.callback()
    if prev.expr ~= 1 then
      return
    end
  else
    keys = prev.expr == 1 and vim.api.nvim_eval(prev.rhs) or prev.rhs
  end
  if type(keys) == 'string' and keys ~= '' then
    if prev.expr ~= 1 or prev.replace_keycodes == 1 then
      keys = vim.keycode(keys)
    end
    vim.api.nvim_feedkeys(keys, (prev.noremap == 1 and 'n' or 'm') .. 'it', false)
  end
end

-- Each action returns true when it handled the key.
local ACTIONS = {
  accept = {
    desc = 'Redraft: accept the suggestion',
    run = function()
      local bufnr = vim.api.nvim_get_current_buf()
      if builtin.is_active(bufnr) then
        return builtin.accept(bufnr)
      end
      return suggestion.is_visible() and suggestion.accept('all')
    end,
  },
  accept_word = {
    desc = 'Redraft: accept the next word of the suggestion',
    run = function()
      return suggestion.is_visible() and suggestion.accept('word')
    end,
  },
  accept_line = {
    desc = 'Redraft: accept the rest of the line of the suggestion',
    run = function()
      return suggestion.is_visible() and suggestion.accept('line')
    end,
  },
  next = {
    desc = 'Redraft: next suggestion',
    run = function()
      local bufnr = vim.api.nvim_get_current_buf()
      if builtin.is_active(bufnr) then
        return builtin.select(bufnr, 1)
      end
      return vim.fn.pumvisible() == 0 and (suggestion.cycle(1) or true)
    end,
  },
  prev = {
    desc = 'Redraft: previous suggestion',
    run = function()
      local bufnr = vim.api.nvim_get_current_buf()
      if builtin.is_active(bufnr) then
        return builtin.select(bufnr, -1)
      end
      return vim.fn.pumvisible() == 0 and (suggestion.cycle(-1) or true)
    end,
  },
  dismiss = {
    desc = 'Redraft: dismiss the suggestion',
    run = function()
      if suggestion.state == nil then
        return false
      end
      suggestion.dismiss()
      return true
    end,
  },
  suggest = {
    desc = 'Redraft: ask for suggestions now',
    run = function()
      if builtin.is_active(vim.api.nvim_get_current_buf()) then
        return false
      end
      suggestion.request(suggestion.INVOKED)
      return true
    end,
  },
}

-- Normal-mode actions on the next-edit proposal; each returns true when it handled the key.
local NEXT_EDIT_ACTIONS = {
  jump = { desc = 'Redraft: jump to the proposed next edit', run = function()
    return require('redraft.next_edit').jump()
  end },
  accept = { desc = 'Redraft: apply the proposed next edit', run = function()
    return require('redraft.next_edit').accept()
  end },
  dismiss = { desc = 'Redraft: dismiss the proposed next edit', run = function()
    return require('redraft.next_edit').dismiss()
  end },
}

local function map(bufnr, mode, lhs, action)
  -- What the key did in this buffer so far: a buffer-local or global mapping, or {}.
  local prev = vim.api.nvim_buf_call(bufnr, function()
    return vim.fn.maparg(lhs, mode, false, true)
  end)
  installed[bufnr][mode .. lhs] = prev
  vim.keymap.set(mode, lhs, function()
    if not action.run() then
      fallback(lhs, prev)
    end
  end, { buffer = bufnr, desc = action.desc, silent = true })
end

---Map the configured keys in `bufnr` (idempotent).
---@param bufnr integer
function M.attach(bufnr)
  if installed[bufnr] then
    return
  end
  installed[bufnr] = {}
  local opts = config.get()
  for name, lhs in pairs(opts.keymaps) do
    if lhs then
      map(bufnr, 'i', lhs, ACTIONS[name])
    end
  end
  for name, lhs in pairs(opts.next_edit.keymaps) do
    if lhs then
      map(bufnr, 'n', lhs, NEXT_EDIT_ACTIONS[name])
    end
  end
end

---Remove our keys from `bufnr`, restoring any buffer-local mapping they shadowed.
---@param bufnr integer
function M.detach(bufnr)
  for key, prev in pairs(installed[bufnr] or {}) do
    local mode, lhs = key:sub(1, 1), key:sub(2)
    if vim.api.nvim_buf_is_valid(bufnr) then
      pcall(vim.keymap.del, mode, lhs, { buffer = bufnr })
      if prev.buffer == 1 then
        vim.api.nvim_buf_call(bufnr, function()
          vim.fn.mapset(mode, false, prev)
        end)
      end
    end
  end
  installed[bufnr] = nil
end

return M
