-- Redraft for Neovim: `require('redraft').setup(opts)` starts the Redraft language server
-- for the configured filetypes and shows its inline completions as ghost text.
-- Requiring this module does nothing; setup() does everything.

local M = {}

local GROUP = 'redraft'

local enabled = false

-- Autocmds for one buffer the server attached to: they drive the ghost text and next edits.
local function watch_buffer(bufnr)
  local suggestion = require('redraft.suggestion')
  local next_edit = require('redraft.next_edit')
  local group = vim.api.nvim_create_augroup('redraft_buffer_' .. bufnr, { clear = true })
  local function on(events, desc, callback)
    vim.api.nvim_create_autocmd(events, { group = group, buffer = bufnr, desc = desc, callback = callback })
  end
  on({ 'TextChanged', 'TextChangedI' }, 'Redraft: ask for the next edit once the user pauses', function()
    next_edit.on_change(bufnr)
  end)
  on({ 'CursorMoved', 'CursorMovedI', 'WinScrolled' }, 'Redraft: keep the off-screen next-edit hint current',
    next_edit.update_hint)
  on('BufLeave', 'Redraft: hide the proposed next edit', next_edit.reset)
  on('InsertEnter', 'Redraft: let the server prepare the place typing starts at', function()
    require('redraft.cursor').announce(bufnr)
  end)
  local builtin = require('redraft.builtin')
  if builtin.wanted() then
    builtin.enable(bufnr)
    require('redraft.keymaps').attach(bufnr)
    return
  end
  on('TextChangedI', 'Redraft: follow typing, ask for a suggestion', function()
    suggestion.sync()
    if suggestion.state == nil then
      suggestion.schedule()
    end
  end)
  on('CursorMovedI', 'Redraft: dismiss when the cursor leaves the suggestion', suggestion.sync)
  on({ 'InsertLeave', 'BufLeave' }, 'Redraft: dismiss the suggestion', suggestion.dismiss)
  on('CompleteChanged', 'Redraft: hide the suggestion under the popup menu', suggestion.render)
  on('CompleteDone', 'Redraft: show the suggestion again after the popup menu', function()
    -- pumvisible() is still 1 while CompleteDone runs.
    vim.schedule(suggestion.sync)
  end)
  require('redraft.keymaps').attach(bufnr)
end

local function unwatch_buffer(bufnr)
  pcall(vim.api.nvim_del_augroup_by_name, 'redraft_buffer_' .. bufnr)
  require('redraft.builtin').disable(bufnr)
  require('redraft.keymaps').detach(bufnr)
end

local function attach_loaded_buffers()
  for _, bufnr in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_is_loaded(bufnr) then
      require('redraft.server').attach(bufnr)
    end
  end
end

---Start suggestions: attach the server to matching buffers, now and when they open.
function M.enable()
  if enabled then
    return
  end
  enabled = true
  local server = require('redraft.server')
  local group = vim.api.nvim_create_augroup(GROUP, { clear = true })
  vim.api.nvim_create_autocmd('FileType', {
    group = group,
    desc = 'Redraft: start the server for configured filetypes',
    callback = function(ev)
      server.attach(ev.buf)
    end,
  })
  vim.api.nvim_create_autocmd('LspAttach', {
    group = group,
    desc = 'Redraft: show ghost text in buffers the server attached to',
    callback = function(ev)
      local client = vim.lsp.get_client_by_id(ev.data.client_id)
      if client and client.name == server.name then
        watch_buffer(ev.buf)
      end
    end,
  })
  vim.api.nvim_create_autocmd('LspDetach', {
    group = group,
    desc = 'Redraft: stop ghost text when the server detaches',
    callback = function(ev)
      local client = vim.lsp.get_client_by_id(ev.data.client_id)
      if client and client.name == server.name then
        unwatch_buffer(ev.buf)
      end
    end,
  })
  vim.api.nvim_create_autocmd('ColorScheme', {
    group = group,
    desc = 'Redraft: restore default highlight links after :colorscheme',
    callback = require('redraft.highlight').define,
  })
  attach_loaded_buffers()
end

---Stop suggestions and the server; buffers keep working as without Redraft.
function M.disable()
  if not enabled then
    return
  end
  enabled = false
  require('redraft.suggestion').reset()
  require('redraft.next_edit').reset()
  pcall(vim.api.nvim_del_augroup_by_name, GROUP)
  for _, client in ipairs(require('redraft.server').clients()) do
    for bufnr in pairs(client.attached_buffers) do
      unwatch_buffer(bufnr)
    end
  end
  require('redraft.server').stop_all()
end

function M.toggle()
  if enabled then
    M.disable()
  else
    M.enable()
  end
end

---@return boolean
function M.is_enabled()
  return enabled
end

---A short report: enabled or not, the server command, attached clients, the suggestion.
---@return string
function M.status()
  local server = require('redraft.server')
  local lines = { ('Redraft: %s'):format(enabled and 'enabled' or 'disabled') }
  local found, exe = server.executable()
  lines[#lines + 1] = ('server: %s (%s)'):format(table.concat(server.cmd(), ' '), found and 'found' or 'not found: ' .. exe)
  for _, client in ipairs(server.clients()) do
    lines[#lines + 1] = ('client %d: root %s, encoding %s, buffers %s'):format(
      client.id,
      client.root_dir or '-',
      client.offset_encoding,
      table.concat(vim.tbl_keys(client.attached_buffers), ',')
    )
  end
  if server.last_message then
    lines[#lines + 1] = 'server said: ' .. server.last_message
  end
  local state = require('redraft.suggestion').state
  if state then
    lines[#lines + 1] = ('suggestion %d/%d shown'):format(state.index, #state.candidates)
  end
  local proposal = require('redraft.next_edit').describe()
  if proposal then
    lines[#lines + 1] = ('next edit proposed at line %d'):format(proposal.row + 1)
  end
  return table.concat(lines, '\n')
end

-- Public actions, for mappings of your own (e.g. with every default key set to false).
function M.accept()
  return require('redraft.suggestion').accept('all')
end
function M.accept_word()
  return require('redraft.suggestion').accept('word')
end
function M.accept_line()
  return require('redraft.suggestion').accept('line')
end
function M.next()
  require('redraft.suggestion').cycle(1)
end
function M.prev()
  require('redraft.suggestion').cycle(-1)
end
function M.dismiss()
  require('redraft.suggestion').dismiss()
end
function M.next_edit_jump()
  return require('redraft.next_edit').jump()
end
function M.next_edit_accept()
  return require('redraft.next_edit').accept()
end
function M.next_edit_dismiss()
  return require('redraft.next_edit').dismiss()
end
function M.suggest()
  require('redraft.suggestion').request(require('redraft.suggestion').INVOKED)
end

local SUBCOMMANDS = {
  enable = M.enable,
  disable = M.disable,
  toggle = M.toggle,
  status = function()
    vim.notify(M.status(), vim.log.levels.INFO)
  end,
  suggest = M.suggest,
}

---@param opts redraft.Config|nil
function M.setup(opts)
  if vim.fn.has('nvim-0.11') == 0 then
    vim.notify('redraft: needs Neovim 0.11 or newer', vim.log.levels.ERROR)
    return
  end
  -- A second setup() replaces the first: restart with the new options.
  M.disable()
  local ok, config = pcall(require('redraft.config').set, opts)
  if not ok then
    -- Say which option is wrong, without a traceback; stay off rather than run with keys
    -- or filetypes the user didn't ask for.
    local why = tostring(config):gsub('^[^\n]-%.lua:%d+: ', '')
    vim.notify('redraft: not started, bad option: ' .. why, vim.log.levels.ERROR)
    return
  end
  require('redraft.highlight').define()
  vim.api.nvim_create_user_command('Redraft', function(cmd)
    local run = SUBCOMMANDS[cmd.args]
    if not run then
      vim.notify('redraft: unknown subcommand ' .. cmd.args, vim.log.levels.ERROR)
      return
    end
    run()
  end, {
    nargs = 1,
    desc = 'Redraft: enable, disable, toggle, status, suggest',
    complete = function()
      return vim.tbl_keys(SUBCOMMANDS)
    end,
  })
  if config.enabled then
    M.enable()
  end
end

return M
