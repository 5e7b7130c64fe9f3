-- Options: annotated defaults, merged with the user's table once in setup() and validated
-- there, so every other module can read `config.get()` without re-checking anything.

local M = {}

---@alias redraft.Key string|false  A key in |map| notation, or false for no mapping.

---@class redraft.Keymaps
---@field accept redraft.Key       Accept the whole suggestion (only while one is shown and no popup menu is open).
---@field accept_word redraft.Key  Accept the next word.
---@field accept_line redraft.Key  Accept the rest of the current line.
---@field next redraft.Key         Show the next candidate (asks for candidates if there is only one).
---@field prev redraft.Key         Show the previous candidate.
---@field dismiss redraft.Key      Hide the suggestion.
---@field suggest redraft.Key      Ask for suggestions now (an "Invoked" request: several candidates).

---@class redraft.NextEditKeymaps  Normal-mode keys, active only while a proposal is shown.
---@field jump redraft.Key     Move the cursor to the proposed edit.
---@field accept redraft.Key   Apply the proposed edit.
---@field dismiss redraft.Key  Hide it (the server hears it was not wanted).

---@class redraft.NextEdit
---@field enabled boolean      Ask for the next edit after each change.
---@field debounce_ms integer  Quiet time after the last change before asking.
---@field keymaps redraft.NextEditKeymaps

---@class redraft.Config
---@field enabled boolean          Start enabled; `:Redraft disable` turns everything off at run time.
---@field filetypes string[]       Filetypes the server is started for (the languages it serves; narrow or widen freely).
---@field cmd string[]|nil         Command that runs the server; nil means `{ 'redraft', 'serve' }` from PATH.
---@field root_markers string[]    Files that mark a project root, tried in order (the buffer's folder otherwise).
---@field init_options table<string, any>  Sent as `initializationOptions` (see the server's options table).
---@field position_encodings string[]|nil  Encodings offered to the server; nil keeps Neovim's own list.
---@field auto_trigger boolean     Ask for suggestions while typing in insert mode.
---@field debounce_ms integer      Quiet time after the last keystroke before asking.
---@field feedback boolean         Tell the server about accepted/dismissed items that carry an `id`.
---@field announce_cursor boolean  Tell the server where insert mode begins (`redraft/cursor`): it prepares that place before the first keystroke.
---@field keymaps redraft.Keymaps
---@field next_edit redraft.NextEdit
---@field inline_completion 'plugin'|'builtin'  Who draws ghost text: this plugin, or Neovim's own `vim.lsp.inline_completion` (Neovim 0.12+; on older versions the plugin draws it and says so once).

---@type redraft.Config
M.defaults = {
  enabled = true,
  filetypes = { 'python', 'javascript', 'javascriptreact', 'typescript', 'typescriptreact' },
  cmd = nil,
  -- package.json after .git: one server (one model) for a whole JavaScript monorepo, not one per package.
  root_markers = { 'pyproject.toml', 'setup.py', 'setup.cfg', '.git', 'package.json' },
  init_options = {},
  position_encodings = nil,
  auto_trigger = true,
  debounce_ms = 150,
  feedback = true,
  announce_cursor = true,
  keymaps = {
    accept = '<Tab>',
    accept_word = '<M-w>',
    accept_line = '<M-l>',
    next = '<M-]>',
    prev = '<M-[>',
    dismiss = '<C-]>',
    suggest = '<M-\\>',
  },
  next_edit = {
    enabled = true,
    debounce_ms = 300,
    keymaps = { jump = '<M-n>', accept = '<M-y>', dismiss = '<M-e>' },
  },
  inline_completion = 'plugin',
}

---@type redraft.Config
local current = vim.deepcopy(M.defaults)

local ENCODINGS = { ['utf-8'] = true, ['utf-16'] = true, ['utf-32'] = true }

---@param list any
---@param check fun(item: any): boolean
local function all(list, check)
  for _, item in ipairs(list) do
    if not check(item) then
      return false
    end
  end
  return true
end

local function is_key(value)
  return value == false or (type(value) == 'string' and value ~= '')
end

local function is_string(value)
  return type(value) == 'string' and value ~= ''
end

---Merge `opts` over the defaults and validate the result; raises a readable error on a
---bad value (vim.validate's message names the option).
---@param opts redraft.Config|nil
---@return redraft.Config
function M.set(opts)
  vim.validate('opts', opts, 'table', true)
  local merged = vim.tbl_deep_extend('force', vim.deepcopy(M.defaults), opts or {})
  -- Lists are replaced, not merged index by index, so a shorter user list wins as given.
  for _, key in ipairs({ 'filetypes', 'cmd', 'root_markers', 'position_encodings' }) do
    if opts and opts[key] ~= nil then
      merged[key] = opts[key]
    end
  end

  vim.validate('enabled', merged.enabled, 'boolean')
  vim.validate('filetypes', merged.filetypes, function(v)
    return type(v) == 'table' and all(v, is_string)
  end, 'list of filetype names')
  vim.validate('cmd', merged.cmd, function(v)
    return type(v) == 'table' and #v > 0 and all(v, is_string)
  end, true, 'non-empty list of strings')
  vim.validate('root_markers', merged.root_markers, function(v)
    return type(v) == 'table' and all(v, is_string)
  end, 'list of file names')
  vim.validate('init_options', merged.init_options, 'table')
  vim.validate('position_encodings', merged.position_encodings, function(v)
    return type(v) == 'table' and #v > 0 and all(v, function(e)
      return ENCODINGS[e] == true
    end)
  end, true, "list of 'utf-8', 'utf-16', 'utf-32'")
  vim.validate('auto_trigger', merged.auto_trigger, 'boolean')
  vim.validate('debounce_ms', merged.debounce_ms, function(v)
    return type(v) == 'number' and v >= 0 and v == math.floor(v)
  end, 'integer >= 0')
  vim.validate('feedback', merged.feedback, 'boolean')
  vim.validate('announce_cursor', merged.announce_cursor, 'boolean')
  vim.validate('keymaps', merged.keymaps, 'table')
  for name in pairs(M.defaults.keymaps) do
    vim.validate('keymaps.' .. name, merged.keymaps[name], is_key, 'key string or false')
  end
  for name in pairs(merged.keymaps) do
    if M.defaults.keymaps[name] == nil then
      error(('keymaps.%s: unknown keymap (known: %s)'):format(
        name,
        table.concat(vim.tbl_keys(M.defaults.keymaps), ', ')
      ), 0)
    end
  end

  vim.validate('next_edit', merged.next_edit, 'table')
  vim.validate('next_edit.enabled', merged.next_edit.enabled, 'boolean')
  vim.validate('next_edit.debounce_ms', merged.next_edit.debounce_ms, function(v)
    return type(v) == 'number' and v >= 0 and v == math.floor(v)
  end, 'integer >= 0')
  vim.validate('next_edit.keymaps', merged.next_edit.keymaps, 'table')
  for name, lhs in pairs(merged.next_edit.keymaps) do
    if M.defaults.next_edit.keymaps[name] == nil then
      error(('next_edit.keymaps.%s: unknown keymap (known: jump, accept, dismiss)'):format(name), 0)
    end
    vim.validate('next_edit.keymaps.' .. name, lhs, is_key, 'key string or false')
  end
  vim.validate('inline_completion', merged.inline_completion, function(v)
    return v == 'plugin' or v == 'builtin'
  end, "'plugin' or 'builtin'")

  current = merged
  return current
end

---@return redraft.Config
function M.get()
  return current
end

return M
