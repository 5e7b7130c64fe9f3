-- :checkhealth redraft: is Neovim new enough, is the server there, is it attached to this
-- buffer, which position encoding was negotiated, and did the server report a problem.

local M = {}

function M.check()
  local health = vim.health
  health.start('redraft')

  local version = vim.version()
  local shown = ('%d.%d.%d'):format(version.major, version.minor, version.patch)
  if vim.fn.has('nvim-0.11') == 1 then
    health.ok('Neovim ' .. shown)
  else
    health.error('Neovim ' .. shown .. ': Redraft needs 0.11 or newer')
    return
  end

  local ok_config, config = pcall(require, 'redraft.config')
  local server = require('redraft.server')
  if not require('redraft').is_enabled() then
    health.warn('Redraft is not enabled: call require("redraft").setup() or run :Redraft enable')
  end

  local found, exe = server.executable()
  if found then
    health.ok(('server command found: %s (%s)'):format(table.concat(server.cmd(), ' '), vim.fn.exepath(exe)))
  else
    health.error(('server command not found: %s'):format(exe), {
      'Install Redraft (pip install -e . in the repository) and put its `redraft` on PATH,',
      'or pass cmd = { "/path/to/.venv/bin/redraft", "serve" } to setup().',
    })
  end

  -- :checkhealth runs in its own buffer, so report every client rather than "this buffer".
  local clients = server.clients()
  for _, client in ipairs(clients) do
    local buffers = vim.tbl_map(function(b)
      return vim.fn.fnamemodify(vim.api.nvim_buf_get_name(b), ':~:.')
    end, vim.tbl_keys(client.attached_buffers))
    health.ok(('client %d attached (root %s) to: %s'):format(
      client.id,
      client.root_dir or '-',
      table.concat(buffers, ', ')
    ))
    health.ok('position encoding negotiated: ' .. client.offset_encoding)
    if not (client.server_capabilities or {}).inlineCompletionProvider then
      health.warn('the server did not announce inlineCompletionProvider')
    end
    if server.offers(client, 'requests', 'redraft/nextEdit') then
      health.ok('the server offers next edits (redraft/nextEdit)')
    else
      health.warn('the server does not offer redraft/nextEdit: no next edits from it')
    end
  end
  if #clients == 0 then
    local filetypes = ok_config and table.concat(config.get().filetypes, ', ') or '?'
    health.warn('no Redraft client is running: open a file of a configured filetype (' .. filetypes .. ')')
  end

  if ok_config then
    local opts = config.get()
    if opts.inline_completion == 'builtin' then
      if vim.lsp.inline_completion then
        health.ok("ghost text: Neovim's built-in vim.lsp.inline_completion (inline_completion = 'builtin')")
      else
        health.warn("inline_completion = 'builtin' needs Neovim 0.12; the plugin draws ghost text instead")
      end
    end
    health.info(opts.next_edit.enabled
      and ('next edits: asked %d ms after a change'):format(opts.next_edit.debounce_ms)
      or 'next edits: off (next_edit.enabled = false)')
  end

  -- The server loads its model in the background and reports a failure with showMessage.
  if server.last_message then
    health.warn('server said: ' .. server.last_message)
  elseif #clients > 0 then
    health.ok('the server reported no problem (model loading errors would show here)')
  end
end

return M
