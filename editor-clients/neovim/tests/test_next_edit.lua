-- Next edit end to end, against the real `redraft serve`: rename a parameter in Normal
-- mode; the server proposes the same rename at its uses (on lines with non-ASCII text before
-- them, where UTF-16 characters and bytes differ), the plugin draws the first, jumps there,
-- accepts it, then accepts the next one the server proposes; a later proposal is dismissed.
-- The server's own counts (`redraft stats`' file) show the accepts and the rejection. Also
-- the option that needs Neovim 0.12. Drawing details: test_rendering.lua.

local H = require('helpers')

local child, dir
local suite = { name = 'next edit' }

function suite.setup()
  dir = H.tempdir()
  child = H.child({ XDG_STATE_HOME = dir })
  child:lua(
    [[
    local cmd = ...
    require('redraft').setup({
      cmd = cmd,
      -- The edit-pattern proposals (confidence >= 0.5), and no ghost text in the way.
      init_options = { confidenceThreshold = 1, nextEditConfidenceThreshold = 0.5, requestTimeoutMs = 20000 },
      position_encodings = { 'utf-16' },
      next_edit = { debounce_ms = 50 },
    })
    ]],
    H.server_cmd()
  )
end

function suite.teardown()
  child:stop()
  vim.fn.delete(dir, 'rf')
end

local SOURCE = {
  'def area(width, height):',
  '    # café ☕: UTF-16 characters and bytes differ on the lines below',
  '    label = "café ☕ 😀"; half = width / 2',
  '    print(label)  # a line between: the two uses are two edits, not one',
  '    note = "naïve"; return half * width + height',
  '',
  'def volume(depth, base):',
  '    return depth * base  # naïve',
}

local function proposal()
  return child:lua("return require('redraft.next_edit').describe()")
end

local function wait_proposal(what)
  return child:wait("return require('redraft.next_edit').describe()", what, H.LSP_TIMEOUT)
end

-- Put the cursor on the first `word` of 1-based line `lnum` (normal mode) and change it.
local function rename_at(lnum, word, new)
  child:input('<Esc>')
  child:wait("return vim.api.nvim_get_mode().mode == 'n'", 'normal mode')
  child:lua(
    [[
    local lnum, word = ...
    local col = vim.fn.getline(lnum):find(word, 1, true)
    vim.api.nvim_win_set_cursor(0, { lnum, col - 1 })
    ]],
    lnum,
    word
  )
  child:input('ciw' .. new .. '<Esc>')
end

local function stats()
  local path = dir .. '/redraft/stats.json'
  if vim.fn.filereadable(path) == 0 then
    return nil
  end
  return vim.json.decode(table.concat(vim.fn.readfile(path), '\n'))
end

suite.tests = {
  {
    'a rename in a def is proposed at its uses, drawn in place, jumped to and accepted one after the other',
    function()
      child:open(dir .. '/area.py', SOURCE)
      rename_at(1, 'width', 'w')
      local shown = wait_proposal('a next edit after the rename')
      -- The server trims the edit to what changes: `width` → `w` removes "idth".
      H.eq({ row = 2, removed = 'idth', added = '' }, shown, 'the first proposal: the nearest use')
      -- The deleted text is highlighted where it is, in bytes: after the multibyte string.
      local mark = child:lua([[
        local ns = require('redraft.next_edit').ns
        for _, m in ipairs(vim.api.nvim_buf_get_extmarks(0, ns, 0, -1, { details = true })) do
          if m[4].hl_group == 'RedraftNextEditDelete' then return { m[2], m[3], m[4].end_col } end
        end
      ]])
      local col = SOURCE[3]:find('width', 1, true) -- 0-based byte column of "idth"
      H.eq({ 2, col, col + #'idth' }, mark, 'the highlighted range (row, byte start, byte end)')
      child:input('<M-n>')
      child:wait(('return vim.api.nvim_win_get_cursor(0)[2] == %d'):format(col), 'the jump to the edit')
      H.eq(3, child:lua('return vim.api.nvim_win_get_cursor(0)[1]'), 'cursor line after the jump')
      child:input('<M-y>')
      local expected = vim.deepcopy(SOURCE)
      expected[1] = 'def area(w, height):'
      expected[3] = '    label = "café ☕ 😀"; half = w / 2'
      child:wait_lines(expected, 'the accepted next edit')
      -- Accepting is a change too: the server carries the rename on to the next use, after
      -- the "naïve" string on its line; accepted from where the cursor is, without a jump.
      shown = wait_proposal('the next use after accepting')
      H.eq({ row = 4, removed = 'idth', added = '' }, shown, 'the second proposal')
      child:input('<M-y>')
      expected[5] = '    note = "naïve"; return half * w + height'
      child:wait_lines(expected, 'the second accepted next edit')
      H.wait(function()
        local counts = stats()
        return counts and counts.next_edit and counts.next_edit.accepted == 2
      end, 'the server to count both accepts', function()
        return vim.inspect(stats())
      end, H.LSP_TIMEOUT)
    end,
  },
  {
    'a dismissed proposal is hidden and counted as rejected by the server',
    function()
      rename_at(7, 'depth', 'd')
      wait_proposal('a next edit after the second rename')
      child:input('<M-e>')
      H.eq(nil, proposal(), 'nothing shown after dismissing')
      H.wait(function()
        local counts = stats()
        return counts and counts.next_edit and counts.next_edit.rejected == 1
      end, 'the server to count the rejection', function()
        return vim.inspect(stats())
      end, H.LSP_TIMEOUT)
      -- With nothing shown, the keys do what they did before: <M-e> is not swallowed.
      H.eq(false, child:lua("return require('redraft.next_edit').dismiss()"), 'dismiss with nothing shown')
    end,
  },
  {
    'dd on an indented line proposes deleting its twin, in a file with \\r\\n line breaks',
    function()
      local lines = { 'def f(a, b):', "    log.debug('start')", '    x = a + b', "    log.debug('start')", '    return x' }
      local path = dir .. '/twin.py'
      -- On disk with \r\n: Neovim reads it as a dos buffer and sends its text with \r\n.
      vim.fn.writefile(vim.list_extend(vim.tbl_map(function(l) return l .. '\r' end, lines), { '' }), path, 'b')
      child:open(path, lines)
      H.eq('dos', child:lua('return vim.bo.fileformat'), 'the buffer keeps the file\'s line breaks')
      child:lua('vim.api.nvim_win_set_cursor(0, { 2, 0 })')
      child:input('dd')
      local shown = wait_proposal('a next edit after the deleted line')
      H.eq({ row = 2, removed = "    log.debug('start')\n", added = '' }, shown, 'the twin, for deletion')
      child:input('<M-y>')
      child:wait_lines({ 'def f(a, b):', '    x = a + b', '    return x' }, 'the twin deleted')
    end,
  },
  {
    'after dd then u, the restored line\'s twin is not proposed for deletion; after a redo it is',
    function()
      local lines = { 'def g(a):', '    check(a)', '    y = a * 2', '    check(a)', '    return y' }
      -- On disk first, as a file a person opens: filling an empty buffer would be a change
      -- that the dd, within the log's merge window, merges into.
      vim.fn.writefile(lines, dir .. '/undo.py')
      child:open(dir .. '/undo.py', lines)
      child:lua('vim.api.nvim_win_set_cursor(0, { 2, 0 })')
      child:input('dd')
      local twin = wait_proposal('a next edit after the deleted line')
      H.eq({ row = 2, removed = '    check(a)\n', added = '' }, twin, 'the twin, for deletion')
      -- Apart by more than the server's merge window, as a person's undo comes: within it, a
      -- change and its undo leave nothing in the log.
      vim.uv.sleep(1100)
      local answers = child:lua("return require('redraft.next_edit').answers")
      child:input('u')
      child:wait_lines(lines, 'the line restored')
      child:wait("return require('redraft.next_edit').answers > " .. answers, 'the answer after the undo', H.LSP_TIMEOUT)
      H.eq(nil, proposal(), 'nothing proposed after the undo')
      vim.uv.sleep(1100)
      child:input('<C-r>')
      H.eq(twin, wait_proposal('a next edit after the redo'), 'the twin again')
    end,
  },
  {
    'a line copied with yyp and changed proposes nothing: the original is not rewritten into the copy',
    function()
      local lines = { 'def setup(config):', '    width = config.get("width", 80)', '    return width', '', '',
        'def other(config):', '    width = config.get("width", 80)', '    return width' }
      vim.fn.writefile(lines, dir .. '/copy.py')
      child:open(dir .. '/copy.py', lines)
      child:lua('vim.api.nvim_win_set_cursor(0, { 2, 0 })')
      child:input('yyp')
      child:wait("return vim.api.nvim_buf_line_count(0) == 9", 'the copy')
      -- Each step a person's pause apart (more than the server's merge window).
      local answers
      for _, keys in ipairs({ '^ciwheight<Esc>', 'f"lciwheight<Esc>', 'f8ciw24<Esc>' }) do
        vim.uv.sleep(1100)
        answers = child:lua("return require('redraft.next_edit').answers")
        child:input(keys)
      end
      H.eq('    height = config.get("height", 24)', child:lua('return vim.fn.getline(3)'), 'the copy, changed')
      child:wait("return require('redraft.next_edit').answers > " .. answers, 'the answer after the change', H.LSP_TIMEOUT)
      H.eq(nil, proposal(), 'nothing proposed')
    end,
  },
  {
    'a line moved with ddp proposes nothing: its twin is not deleted',
    function()
      local lines = { 'def h(a):', '    check(a)', '    y = a * 2', '    z = y - 1', '    check(a)', '    return z' }
      vim.fn.writefile(lines, dir .. '/move.py')
      child:open(dir .. '/move.py', lines)
      child:lua('vim.api.nvim_win_set_cursor(0, { 2, 0 })')
      child:input('dd')
      wait_proposal('a next edit after the deleted line')
      local answers = child:lua("return require('redraft.next_edit').answers")
      child:input('p')
      child:wait_lines({ 'def h(a):', '    y = a * 2', '    check(a)', '    z = y - 1', '    check(a)', '    return z' },
        'the line put back below')
      child:wait("return require('redraft.next_edit').answers > " .. answers, 'the answer after the move', H.LSP_TIMEOUT)
      H.eq(nil, proposal(), 'nothing proposed after the move')
    end,
  },
  {
    "inline_completion = 'builtin' needs Neovim 0.12 and falls back on older versions",
    function()
      if child:lua('return vim.lsp.inline_completion ~= nil') then
        H.skip('this Neovim has vim.lsp.inline_completion; the fallback is for older versions')
      end
      H.eq(false, child:lua("return pcall(require('redraft.config').set, { inline_completion = 'both' })"),
        'an unknown value is rejected')
      child:lua([[
        _G.redraft_messages = {}
        vim.notify_once = function(msg) table.insert(_G.redraft_messages, msg) end
        local cmd = ...
        require('redraft').setup({ cmd = cmd, inline_completion = 'builtin',
          init_options = { confidenceThreshold = 1, requestTimeoutMs = 20000 } })
      ]], H.server_cmd())
      child:open(dir .. '/builtin.py', { 'x = 1' })
      local messages = child:wait('return #_G.redraft_messages > 0 and _G.redraft_messages', 'the fallback notice')
      H.truthy(messages[1]:find('0.12', 1, true), 'the notice names the version: ' .. messages[1])
      local ghost = child:lua([[
        for _, a in ipairs(vim.api.nvim_get_autocmds({ event = 'TextChangedI', buffer = 0 })) do
          if (a.desc or ''):find('ask for a suggestion', 1, true) then return true end
        end
        return false
      ]])
      H.eq(true, ghost, "the plugin's ghost text drives the buffer instead")
      local report = child:lua([[
        vim.cmd('checkhealth redraft')
        local text = table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), '\n')
        vim.cmd('bwipeout!')
        return text
      ]])
      H.truthy(report:find("WARNING inline_completion = 'builtin' needs Neovim 0.12", 1, true),
        'the health report says so too:\n' .. report)
    end,
  },
}

return suite
