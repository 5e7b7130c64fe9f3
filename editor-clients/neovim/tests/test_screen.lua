-- Looked at as a person would: Neovim in a real terminal (tmux), keys typed into it, the
-- screen captured with `tmux capture-pane -p` and checked for the ghost text. The plugin's
-- state is read over Neovim's --listen socket only to know what to look for.

local H = require('helpers')

local suite = { name = 'screen' }
local dir, socket, tmux_socket, nvim

-- `new-session` forks the tmux server, which would hold captured pipes open forever:
-- output is only captured for commands that return something.
local function tmux(...)
  local capture = ({ ... })[1] == 'capture-pane'
  local result = vim.system({ 'tmux', '-L', tmux_socket, ... }, {
    text = true,
    stdout = capture,
    stderr = false,
  }):wait(10000)
  if result.code ~= 0 then
    error(('tmux %s: exit code %d'):format(table.concat({ ... }, ' '), result.code), 2)
  end
  return result.stdout
end

function suite.setup()
  if vim.fn.executable('tmux') == 0 then
    return
  end
  dir = H.tempdir()
  socket = dir .. '/nvim.sock'
  -- A tmux server of our own (-L), so the user's sessions are never touched.
  tmux_socket = 'redraft-test-' .. vim.fn.getpid()
  local init = dir .. '/init.lua'
  vim.fn.writefile({
    ('vim.opt.rtp:prepend(%q)'):format(H.plugin_dir),
    ('require("redraft").setup({ cmd = %s, init_options = %s, debounce_ms = 50 })'):format(
      -- One line each: writefile() would turn a newline inside an item into a NUL.
      vim.inspect(H.server_cmd(), { newline = ' ', indent = '' }),
      vim.inspect(H.init_options, { newline = ' ', indent = '' })
    ),
  }, init)
  vim.fn.writefile({ 'def add(a, b):', '    return a' }, dir .. '/screen.py')
  tmux('new-session', '-d', '-s', 'main', '-x', '100', '-y', '20', '-e', 'XDG_STATE_HOME=' .. dir, '--',
    vim.v.progpath, '--clean', '-n', '-i', 'NONE', '--listen', socket, '--cmd', 'luafile ' .. init, '+', dir .. '/screen.py')
end

function suite.teardown()
  if nvim then
    nvim:stop()
  end
  if tmux_socket then
    pcall(tmux, 'kill-server')
    local uid = vim.uv.getuid and vim.uv.getuid() or 0
    os.remove(('%s/tmux-%d/%s'):format(vim.env.TMUX_TMPDIR or '/tmp', uid, tmux_socket))
  end
  if dir then
    vim.fn.delete(dir, 'rf')
  end
end

-- Reach the Neovim in tmux over its socket once its Redraft client is attached.
local function connect()
  if vim.fn.executable('tmux') == 0 then
    H.skip('tmux is not installed (apt-get install tmux)')
  end
  if nvim then
    return
  end
  H.wait(function()
    return vim.uv.fs_stat(socket) ~= nil
  end, 'Neovim in tmux to listen')
  nvim = H.child(nil, socket)
  nvim:wait("return #vim.lsp.get_clients({ bufnr = 0, name = 'redraft' }) > 0", 'the client', H.LSP_TIMEOUT)
end

suite.tests = {
  {
    'ghost text typed into Neovim in tmux shows on the captured screen at the cursor',
    function()
      connect()
      local function answers()
        return nvim:lua("return require('redraft.suggestion').answers")
      end
      local before = answers()
      tmux('send-keys', '-t', 'main', 'A', ' +')
      -- The weak model often has nothing to say to an automatic request: then ask (Invoked).
      for _ = 1, 3 do
        local got = nvim:wait(
          ("local s = require('redraft.suggestion'); return s.answers > %d and (s.state ~= nil or 'none')"):format(before),
          'an answer',
          H.LSP_TIMEOUT
        )
        if got ~= 'none' then
          break
        end
        before = answers()
        tmux('send-keys', '-t', 'main', 'M-\\')
      end
      local g = nvim:wait_ghost()
      -- What the cursor's screen line must read with the ghost text drawn inline (or, for a
      -- suggestion starting with a line break, what the virtual line below must read).
      local first, second = g.remaining:match('^([^\n]*)\n?([^\n]*)')
      local row = nvim:lua('return vim.fn.winline()')
      local line = g.lines[g.row + 1]
      local want = first ~= '' and (line:sub(1, g.col) .. first .. line:sub(g.col + 1)) or second
      local want_row = first ~= '' and row or row + 1
      want = want:gsub('%s+$', '')
      local screen
      H.wait(function()
        screen = vim.split(tmux('capture-pane', '-p', '-t', 'main'), '\n')
        -- The row may go on with the candidate marker ("1/2") after the text.
        return vim.startswith(screen[want_row] or '', want)
      end, ('screen row %d to read %q'):format(want_row, want), function()
        return '\n' .. table.concat(screen or {}, '\n')
      end)
    end,
  },
  {
    'a next-edit proposal shows on the captured screen: the sign, the old text and the new text after it',
    function()
      connect()
      -- Rename the parameter `a` in Normal mode, as typed; the server proposes it at its use.
      tmux('send-keys', '-t', 'main', 'Escape')
      nvim:wait("return vim.api.nvim_get_mode().mode == 'n' and require('redraft.suggestion').state == nil", 'Normal mode')
      nvim:lua("vim.api.nvim_win_set_cursor(0, { 1, vim.fn.getline(1):find('a,', 1, true) - 1 })")
      tmux('send-keys', '-t', 'main', 'c', 'i', 'w', 'first', 'Escape')
      local p = nvim:wait("return require('redraft.next_edit').describe()", 'a next-edit proposal', H.LSP_TIMEOUT)
      local state = nvim:lua("local s = require('redraft.next_edit').state; return { s.start, s.finish }")
      local line = nvim:lua('return vim.fn.getline(...)', p.row + 1)
      -- Screen row of that line (1-based, no wrapping here), after the sign column.
      local row = nvim:lua('return vim.fn.screenpos(0, ..., 1).row', p.row + 1)
      local want = '» ' .. line:sub(1, state[2][2]) .. p.added .. line:sub(state[2][2] + 1)
      want = want:gsub('%s+$', '')
      local screen
      H.wait(function()
        screen = vim.split(tmux('capture-pane', '-p', '-t', 'main'), '\n')
        return screen[row] == want
      end, ('screen row %d to read %q'):format(row, want), function()
        return '\n' .. table.concat(screen or {}, '\n')
      end)
    end,
  },
}

return suite
