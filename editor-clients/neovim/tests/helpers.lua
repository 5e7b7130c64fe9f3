-- Test helpers: a child Neovim driven over RPC (like a user at a keyboard: keys go through
-- nvim_input, so mappings and autocmds run as in real use), assertions, and conditions
-- waited on with vim.wait — never a fixed sleep.

local M = {}

M.plugin_dir = vim.fs.dirname(vim.fs.dirname(vim.fs.abspath(debug.getinfo(1, 'S').source:sub(2))))

---The server command for tests: $REDRAFT_CMD (path to the `redraft` executable) or PATH.
function M.server_cmd()
  return { vim.env.REDRAFT_CMD or 'redraft', 'serve' }
end

-- Server options for tests: show anything the (still weakly trained) model says, and give
-- it time on a loaded machine.
M.init_options = { confidenceThreshold = 0, requestTimeoutMs = 20000 }

-- Generous: the model may share two cores with a training job.
M.LSP_TIMEOUT = 30000

function M.skip(why)
  error({ skip = why }, 0)
end

function M.eq(expected, actual, what)
  if not vim.deep_equal(expected, actual) then
    error(('%s\n  expected: %s\n  actual:   %s'):format(what or 'values differ', vim.inspect(expected), vim.inspect(actual)), 2)
  end
end

function M.truthy(value, what)
  if not value then
    error(what or 'expected a true value', 2)
  end
  return value
end

---A folder for this run's files, removed at exit.
function M.tempdir()
  local dir = vim.fn.tempname() .. '-redraft'
  vim.fn.mkdir(dir, 'p')
  return dir
end

---@class test.Child
---@field chan integer
local Child = {}
Child.__index = Child

---Start a child Neovim (`--embed --headless --clean`) with the plugin on its runtimepath.
---@param env table<string, string>|nil extra environment (e.g. XDG_STATE_HOME for the server's stats)
---@param listen string|nil connect to an existing Neovim at this address instead
function M.child(env, listen)
  local chan
  if listen then
    chan = vim.fn.sockconnect('pipe', listen, { rpc = true })
  else
    local argv = { vim.v.progpath, '--embed', '--headless', '--clean', '-n', '-i', 'NONE' }
    chan = vim.fn.jobstart(argv, { rpc = true, env = env })
  end
  assert(chan > 0, 'could not start or reach the child Neovim')
  local child = setmetatable({ chan = chan }, Child)
  if not listen then
    child:lua('vim.opt.rtp:prepend(...)', M.plugin_dir)
  end
  return child
end

---Run Lua in the child; `...` become its `...`.
function Child:lua(code, ...)
  local result = vim.rpcrequest(self.chan, 'nvim_exec_lua', code, { ... })
  -- A Lua nil comes back as vim.NIL, which is truthy; tests want a plain nil.
  if result == vim.NIL then
    return nil
  end
  return result
end

---Keys as typed by a user (|keycodes| allowed, mappings apply).
function Child:input(keys)
  vim.rpcrequest(self.chan, 'nvim_input', keys)
end

---Wait until Lua `code` evaluates truthy in the child; fail with `what` after `timeout` ms.
function Child:wait(code, what, timeout)
  local result
  local ok = vim.wait(timeout or 5000, function()
    result = self:lua(code)
    return result ~= nil and result ~= false
  end, 50)
  if not ok then
    error('timed out waiting for ' .. what, 2)
  end
  return result
end

---Wait until `check()` (run here, usually querying the child) returns a true value.
---@param describe fun(): string  called on timeout to say what was seen instead
function M.wait(check, what, describe, timeout)
  local result
  local ok = vim.wait(timeout or 5000, function()
    result = check()
    return result ~= nil and result ~= false
  end, 50)
  if not ok then
    error(('timed out waiting for %s%s'):format(what, describe and ('; saw ' .. describe()) or ''), 2)
  end
  return result
end

---Wait until the child's current buffer holds exactly `expected`.
function Child:wait_lines(expected, what)
  M.wait(function()
    return vim.deep_equal(self:lines(), expected)
  end, what or 'the buffer to change', function()
    return vim.inspect(self:lines()) .. ', expected ' .. vim.inspect(expected)
  end)
end

function Child:stop()
  pcall(vim.rpcrequest, self.chan, 'nvim_command', 'qa!')
  pcall(vim.fn.jobstop, self.chan)
end

---Open `path` with `lines`, cursor on the last line's end, in normal mode; wait for the
---Redraft client to attach.
function Child:open(path, lines)
  self:input('<Esc>')
  self:wait("return vim.api.nvim_get_mode().mode == 'n'", 'normal mode')
  self:lua(
    [[
    local path, lines = ...
    vim.cmd.edit(vim.fn.fnameescape(path))
    vim.api.nvim_buf_set_lines(0, 0, -1, false, lines)
    vim.api.nvim_win_set_cursor(0, { #lines, math.max(#lines[#lines] - 1, 0) })
    ]],
    path,
    lines
  )
  self:wait(
    "return #vim.lsp.get_clients({ bufnr = 0, name = 'redraft' }) > 0 and vim.b.changedtick > 0",
    'the redraft client to attach',
    M.LSP_TIMEOUT
  )
end

-- What the plugin shows: candidate item, remaining text, cursor, line, ghost on screen.
local SNAPSHOT = [[
  local s = require('redraft.suggestion')
  if not s.state then return nil end
  local pos = vim.api.nvim_win_get_cursor(0)
  return {
    item = s.state.candidates[s.state.index].item,
    remaining = s.remaining(),
    shown = require('redraft.ghost').shown_text(0),
    row = pos[1] - 1, col = pos[2],
    lines = vim.api.nvim_buf_get_lines(0, 0, -1, false),
    texts = vim.tbl_map(function(c) return c.text end, s.state.candidates),
    index = s.state.index,
    invoked = s.state.invoked,
  }
]]

---Wait until ghost text is drawn and return a snapshot of it.
function Child:wait_ghost()
  local drawn = 'if vim.fn.pumvisible() == 1 or not require("redraft.ghost").shown_text(0) then return nil end\n'
  return self:wait(drawn .. SNAPSHOT, 'ghost text from the server', M.LSP_TIMEOUT)
end

function Child:snapshot()
  return self:lua(SNAPSHOT)
end

function Child:lines()
  return self:lua('return vim.api.nvim_buf_get_lines(0, 0, -1, false)')
end

---`text` as nvim_input keys: "<" must be written "<lt>".
function M.keys(text)
  return (text:gsub('<', '<lt>'))
end

---`lines` with `text` inserted at 0-based (row, byte col): what accepting should produce.
function M.insert(lines, row, col, text)
  local result = vim.deepcopy(lines)
  local line = result[row + 1]
  local parts = vim.split(line:sub(1, col) .. text, '\n', { plain = true })
  parts[#parts] = parts[#parts] .. line:sub(col + 1)
  table.remove(result, row + 1)
  for i, part in ipairs(parts) do
    table.insert(result, row + i, part)
  end
  return result
end

---Number of UTF-16 code units in `text` (what an LSP "character" counts by default).
function M.utf16_len(text)
  local units = 0
  for i = 1, #text do
    local byte = text:byte(i)
    if byte >= 0xF0 then
      units = units + 2 -- a 4-byte sequence is outside the BMP: a surrogate pair
    elseif byte < 0x80 or byte >= 0xC0 then
      units = units + 1 -- ASCII or the lead byte of a 2/3-byte sequence
    end
  end
  return units
end

return M
