-- A dependency-free test runner, run by Neovim itself:
--   nvim --headless -u NONE -i NONE -l tests/run.lua [name-filter]
-- Loads every tests/test_*.lua (each returns a suite: { name, setup?, teardown?, tests =
-- { { 'sentence', fn }, ... } }), runs each test in a protected call, and ends with the
-- line "N passed, N failed" that CI reads. Exits non-zero when anything failed.

local here = vim.fs.dirname(vim.fs.abspath(debug.getinfo(1, 'S').source:sub(2)))
package.path = here .. '/?.lua;' .. package.path

-- Plain lines on stdout (print() in `nvim -l` leaves the last line without its newline).
local function say(text)
  io.stdout:write(text, '\n')
  io.stdout:flush()
end

local filter = _G.arg and _G.arg[1] or nil
local passed, failed, skipped = 0, 0, 0

-- A test skips itself with error({ skip = 'why' }) (see helpers.skip).
local function run(name, fn)
  local ok, err = xpcall(fn, function(e)
    if type(e) == 'table' and e.skip then
      return e
    end
    return debug.traceback(tostring(e), 2)
  end)
  if ok then
    passed = passed + 1
    say('ok    ' .. name)
  elseif type(err) == 'table' and err.skip then
    skipped = skipped + 1
    say('SKIP  ' .. name .. ': ' .. err.skip)
  else
    failed = failed + 1
    say('FAIL  ' .. name .. '\n' .. tostring(err):gsub('\n', '\n      '))
  end
end

local files = vim.fn.glob(here .. '/test_*.lua', false, true)
table.sort(files)
for _, file in ipairs(files) do
  local suite = dofile(file)
  local selected = vim.tbl_filter(function(case)
    return not filter or (suite.name .. ': ' .. case[1]):find(filter, 1, true) ~= nil
  end, suite.tests)
  if #selected > 0 then
    say(('-- %s (%s)'):format(suite.name, vim.fs.basename(file)))
    local ready, setup_err = true, nil
    if suite.setup then
      ready, setup_err = xpcall(suite.setup, debug.traceback)
    end
    for _, case in ipairs(selected) do
      local name = suite.name .. ': ' .. case[1]
      if ready then
        run(name, case[2])
      else
        run(name, function()
          error('suite setup failed: ' .. tostring(setup_err), 0)
        end)
      end
    end
    if suite.teardown then
      pcall(suite.teardown)
    end
  end
end

if skipped > 0 then
  say(('%d skipped'):format(skipped))
end
say(('%d passed, %d failed'):format(passed, failed))
os.exit(failed > 0 and 1 or 0)
