-- What the plugin draws and sends for answers written by hand: a child Neovim with the
-- plugin and a stand-in server (tests/fake_server.lua) whose `redraft/nextEdit` and
-- inline-completion answers each test chooses. Ranges are computed here in the encoding the
-- stand-in negotiated, so the drawing and the applied edit are checked in bytes against
-- lines with multi-byte text before the edit.

local H = require('helpers')

local child
local suite = { name = 'drawing and keys (stand-in server)' }

local FAKE = H.plugin_dir .. '/tests/fake_server.lua'

function suite.setup()
  child = H.child()
  child:lua(
    [[
    local fake_path = ...
    -- Keys a user had before Redraft: with nothing shown, Redraft's keys must run these.
    vim.g.pressed = {}
    for _, lhs in ipairs({ '<M-n>', '<M-y>', '<M-e>' }) do
      vim.keymap.set('n', lhs, function()
        local pressed = vim.g.pressed -- a copy: append, then store back
        table.insert(pressed, lhs)
        vim.g.pressed = pressed
      end)
    end
    dofile(fake_path)
    require('redraft').setup({
      filetypes = {}, -- the stand-in is started by hand below, never the real server
      debounce_ms = 20,
      next_edit = { debounce_ms = 20 },
    })
    ]],
    FAKE
  )
end

function suite.teardown()
  child:stop()
end

local opened = 0

-- A fresh buffer holding `lines`, cursor on the first line, attached to a stand-in client
-- that negotiated `encoding` (a client per encoding: vim.lsp keeps one per root; `root`
-- chooses another).
local function open(lines, encoding, root)
  opened = opened + 1
  child:input('<Esc>')
  child:wait("return vim.api.nvim_get_mode().mode == 'n'", 'normal mode')
  child:lua(
    [[
    local lines, encoding, n, root = ...
    vim.cmd.enew()
    vim.api.nvim_buf_set_name(0, vim.fn.tempname() .. '-' .. n .. '.py')
    vim.api.nvim_buf_set_lines(0, 0, -1, false, lines)
    vim.api.nvim_win_set_cursor(0, { 1, 0 })
    fake.offer = { encoding }
    fake.start(0, root or '/tmp/redraft-fake-' .. encoding)
    ]],
    lines,
    encoding,
    opened,
    root
  )
  child:wait(
    "local c = vim.lsp.get_clients({ bufnr = 0, name = 'redraft' })[1]; return c and c.initialized and vim.fn.maparg('<M-y>', 'n', false, true).buffer == 1",
    'the stand-in client to attach'
  )
  H.eq(encoding, child:lua("return vim.lsp.get_clients({ bufnr = 0, name = 'redraft' })[1].offset_encoding"),
    'negotiated encoding')
end

-- Length of `text` in `encoding`'s code units (what an LSP "character" counts).
local function units(text, encoding)
  if encoding == 'utf-8' then
    return #text
  end
  if encoding == 'utf-16' then
    return H.utf16_len(text)
  end
  return vim.fn.strchars(text)
end

-- A next-edit item replacing `old` (found after `after` on 0-based `row` of `line`) with `new`.
local function item_for(line, row, after, old, new, encoding, id)
  local at = assert(line:find(old, #after + 1, true), 'test setup: text not found') - 1
  local start = units(line:sub(1, at), encoding)
  return {
    id = id,
    edit = {
      range = { start = { line = row, character = start }, ['end'] = { line = row, character = start + units(old, encoding) } },
      newText = new,
    },
    confidence = 0.9,
  },
    at
end

-- Let the stand-in answer the next `redraft/nextEdit` with `items` (stamped with the
-- document's current version, or `version_offset` before it), ask, and wait for the answer.
local function answer_with(items, version_offset)
  child:lua(
    [[
    local items, offset = ...
    fake.next_edit = function(params, version)
      for _, item in ipairs(items) do
        item.textDocument = { uri = params.textDocument.uri, version = version - (offset or 0) }
      end
      return { items = items }
    end
    _G.answers_before = require('redraft.next_edit').answers
    require('redraft.next_edit').request(0)
    ]],
    items,
    version_offset
  )
  child:wait("return require('redraft.next_edit').answers > _G.answers_before", 'the stand-in to answer')
end

local function marks()
  return child:lua([[
    local out = {}
    for _, m in ipairs(vim.api.nvim_buf_get_extmarks(0, require('redraft.next_edit').ns, 0, -1, { details = true })) do
      local d = m[4]
      out[#out + 1] = {
        row = m[2], col = m[3], end_row = d.end_row, end_col = d.end_col, hl = d.hl_group,
        sign = d.sign_text and vim.trim(d.sign_text) or nil, sign_hl = d.sign_hl_group,
        pos = d.virt_text_pos,
        text = d.virt_text and table.concat(vim.tbl_map(function(c) return c[1] end, d.virt_text)) or nil,
        text_hl = d.virt_text and d.virt_text[1][2] or nil,
        lines = d.virt_lines and vim.tbl_map(function(l) return l[1][1] end, d.virt_lines) or nil,
      }
    end
    return out
  ]])
end

local function find(list, pred)
  for _, m in ipairs(list) do
    if pred(m) then
      return m
    end
  end
end

local function feedback_sent()
  return child:lua("return vim.tbl_map(function(e) return e.params end, fake.sent('redraft/feedback'))")
end

local LINE = '    note = "naïve café ☕ 😀"; total = width * 2  # ünïcode'

suite.tests = {
  {
    'a replacement is drawn in place: removed text highlighted, new text inline after it, a sign on its line',
    function()
      open({ 'def f(width):', LINE, 'x' }, 'utf-16')
      local item, at = item_for(LINE, 1, '    note = "naïve café ☕ 😀"', 'width', 'size', 'utf-16', 'r1')
      answer_with({ item })
      local m = marks()
      local del = H.truthy(find(m, function(x) return x.hl == 'RedraftNextEditDelete' end), 'a highlight: ' .. vim.inspect(m))
      H.eq({ 1, at, 1, at + #'width' }, { del.row, del.col, del.end_row, del.end_col }, 'the removed range, in bytes')
      local add = H.truthy(find(m, function(x) return x.pos == 'inline' end), 'inline text: ' .. vim.inspect(m))
      H.eq({ 1, at + #'width', 'size', 'RedraftNextEditInsert' }, { add.row, add.col, add.text, add.text_hl }, 'the added text')
      local sign = H.truthy(find(m, function(x) return x.sign end), 'a sign: ' .. vim.inspect(m))
      H.eq({ 1, '»', 'RedraftNextEditSign' }, { sign.row, sign.sign, sign.sign_hl }, 'the sign')
      H.eq(nil, find(m, function(x) return x.pos == 'eol' end), 'no off-screen hint while it is in view')
      H.eq({ row = 1, removed = 'width', added = 'size' }, child:lua("return require('redraft.next_edit').describe()"))
    end,
  },
  {
    'an insertion of several lines is drawn as inline text and virtual lines, with nothing highlighted',
    function()
      open({ 'def f():', '    pass' }, 'utf-16')
      local item = { id = 'm1', edit = { range = { start = { line = 1, character = 8 }, ['end'] = { line = 1, character = 8 } },
        newText = '  # done\n\tlog()\n    return 1' } }
      answer_with({ item })
      local m = marks()
      H.eq(nil, find(m, function(x) return x.hl == 'RedraftNextEditDelete' end), 'nothing removed, nothing highlighted')
      local add = H.truthy(find(m, function(x) return x.pos == 'inline' end), 'inline text: ' .. vim.inspect(m))
      H.eq({ 1, 8, '  # done' }, { add.row, add.col, add.text }, 'the first line inline at the insertion point')
      local tab = string.rep(' ', child:lua('return vim.bo.tabstop'))
      H.eq({ tab .. 'log()', '    return 1' }, add.lines, 'the other lines below, tabs expanded')
    end,
  },
  {
    'an insertion whose lines break with \\r\\n (a dos buffer\'s) is drawn and accepted without a stray \\r',
    function()
      open({ 'def f():', '    pass' }, 'utf-16')
      local item = { id = 'm2', edit = { range = { start = { line = 1, character = 8 }, ['end'] = { line = 1, character = 8 } },
        newText = '  # done\r\n    log()\r\n    return 1' } }
      answer_with({ item })
      local add = H.truthy(find(marks(), function(x) return x.pos == 'inline' end), 'inline text: ' .. vim.inspect(marks()))
      H.eq({ '  # done', { '    log()', '    return 1' } }, { add.text, add.lines }, 'the lines, without \\r')
      child:lua("require('redraft.next_edit').accept()")
      H.eq({ 'def f():', '    pass  # done', '    log()', '    return 1' },
        child:lua('return vim.api.nvim_buf_get_lines(0, 0, -1, false)'), 'the buffer after accepting')
      H.eq({ 4, 11 }, child:lua('return vim.api.nvim_win_get_cursor(0)'), 'the cursor at the end of the insertion')
    end,
  },
  {
    'an off-screen proposal gets a hint at the cursor line that follows the cursor and goes once it is in view; the jump key moves there',
    function()
      local lines = {}
      for i = 1, 120 do
        lines[i] = ('value_%d = %d'):format(i, i)
      end
      open(lines, 'utf-16')
      local item = { id = 'o1', edit = { range = { start = { line = 99, character = 0 }, ['end'] = { line = 99, character = 5 } },
        newText = 'total' } }
      answer_with({ item })
      local hint = H.truthy(find(marks(), function(x) return x.pos == 'eol' end), 'a hint: ' .. vim.inspect(marks()))
      H.eq({ 0, '  next edit: line 100' }, { hint.row, hint.text }, 'the hint, on the cursor line')
      child:input('jj')
      H.wait(function()
        local h = find(marks(), function(x) return x.pos == 'eol' end)
        return h and h.row == 2
      end, 'the hint to follow the cursor', function() return vim.inspect(marks()) end)
      H.eq(1, #vim.tbl_filter(function(x) return x.pos == 'eol' end, marks()), 'one hint, moved (not copied)')
      child:input('<M-n>')
      child:wait('return vim.api.nvim_win_get_cursor(0)[1] == 100', 'the jump to line 100')
      H.wait(function()
        return not find(marks(), function(x) return x.pos == 'eol' end)
      end, 'the hint to go once the proposal is in view', function() return vim.inspect(marks()) end)
      H.truthy(child:lua("return require('redraft.next_edit').describe() ~= nil"), 'still proposed after the jump')
      child:input('<C-o>')
      child:wait('return vim.api.nvim_win_get_cursor(0)[1] == 3', '<C-o> to come back')
      H.wait(function()
        return find(marks(), function(x) return x.pos == 'eol' end)
      end, 'the hint to come back when scrolled away', function() return vim.inspect(marks()) end)
      child:input('<M-e>')
    end,
  },
  {
    'accept applies the edit where the server meant in UTF-8, UTF-16 and UTF-32, and sends accepted feedback',
    function()
      for _, encoding in ipairs({ 'utf-8', 'utf-16', 'utf-32' }) do
        open({ 'def f(width):', LINE }, encoding)
        local id = 'a-' .. encoding
        local item = item_for(LINE, 1, '    note = "naïve café ☕ 😀"', 'width', 'size', encoding, id)
        answer_with({ item })
        child:input('<M-y>')
        local expected = { 'def f(width):', (LINE:gsub('total = width', 'total = size')) }
        child:wait_lines(expected, 'the edit applied in ' .. encoding)
        H.eq(nil, child:lua("return require('redraft.next_edit').describe()"), 'nothing shown after accepting')
        H.wait(function()
          return vim.tbl_contains(feedback_sent(), function(f) return f.id == id and f.accepted == true end,
            { predicate = true })
        end, 'accepted feedback for ' .. id, function() return vim.inspect(feedback_sent()) end)
      end
      H.eq({}, child:lua('return vim.g.pressed'), 'the user keys were not run while a proposal was shown')
    end,
  },
  {
    'dismiss hides the proposal and sends rejected feedback; with nothing shown each key does what it did before',
    function()
      open({ 'def f(width):', LINE }, 'utf-16')
      answer_with({ (item_for(LINE, 1, '', 'width', 'size', 'utf-16', 'd1')) })
      child:input('<M-e>')
      child:wait("return require('redraft.next_edit').describe() == nil", 'the proposal to go')
      H.eq(0, #marks(), 'nothing drawn')
      H.wait(function()
        return vim.tbl_contains(feedback_sent(), function(f) return f.id == 'd1' and f.accepted == false end,
          { predicate = true })
      end, 'rejected feedback', function() return vim.inspect(feedback_sent()) end)
      H.eq({}, child:lua('return vim.g.pressed'), 'the dismiss key was not passed on while it acted')
      child:input('<M-n><M-y><M-e>')
      child:wait('return #vim.g.pressed == 3', 'the user keys to run', 5000)
      H.eq({ '<M-n>', '<M-y>', '<M-e>' }, child:lua('return vim.g.pressed'), 'the keys fell back in order')
      child:lua('vim.g.pressed = {}')
      H.eq(LINE, child:lua('return vim.fn.getline(2)'), 'the buffer untouched')
    end,
  },
  {
    'an answer about an older version is not drawn, a malformed item is skipped, and a change hides what is shown',
    function()
      open({ 'def f(width):', LINE }, 'utf-16')
      local item = item_for(LINE, 1, '', 'width', 'size', 'utf-16', 's1')
      answer_with({ item }, 1)
      H.eq(nil, child:lua("return require('redraft.next_edit').describe()"), 'the stale answer is not drawn')
      H.eq(0, #marks(), 'nothing drawn for it')
      answer_with({ { id = 'bad', edit = { newText = 'x' } }, item })
      H.eq({ row = 1, removed = 'width', added = 'size' }, child:lua("return require('redraft.next_edit').describe()"),
        'the first well-formed item is drawn')
      child:input('x')
      child:wait("return require('redraft.next_edit').describe() == nil", 'the change to hide the proposal')
      H.eq(0, #marks(), 'nothing left drawn')
    end,
  },
  {
    'ghost text wins: a proposal is not drawn while ghost text is shown, and ghost text drawn later replaces it',
    function()
      open({ 'def f(width):', LINE }, 'utf-16')
      local item = item_for(LINE, 1, '', 'width', 'size', 'utf-16', 'g1')
      answer_with({ item })
      H.truthy(child:lua("return require('redraft.next_edit').describe() ~= nil"), 'the proposal is shown first')
      child:lua([[
        fake.inline = function(params)
          return { items = { { insertText = ' # ok', range = { start = params.position, ['end'] = params.position } } } }
        end
      ]])
      child:input('A<M-\\>')
      child:wait("return require('redraft.ghost').shown_text(0) == ' # ok'", 'the ghost text')
      H.eq(nil, child:lua("return require('redraft.next_edit').describe()"), 'the ghost text replaced the proposal')
      answer_with({ item })
      H.eq(nil, child:lua("return require('redraft.next_edit').describe()"), 'no proposal while ghost text is shown')
      H.eq({}, feedback_sent() and vim.tbl_filter(function(f) return f.id == 'g1' end, feedback_sent()),
        'no feedback: the user did not decide')
      child:input('<C-]><Esc>')
      child:lua('fake.inline = nil')
    end,
  },
  {
    'after a change the request goes to the cursor, in the negotiated encoding',
    function()
      open({ 'def f(width):', '    s = "☕😀" + width' }, 'utf-16')
      child:lua('fake.next_edit = nil; _G.asked = #fake.sent("redraft/nextEdit")')
      child:input('2G$x') -- one change in Normal mode: one request, from where the cursor lands
      local params = child:wait(
        'local sent = fake.sent("redraft/nextEdit"); return #sent > _G.asked and sent[#sent].params',
        'a redraft/nextEdit request after the change'
      )
      local line = child:lua('return vim.fn.getline(2)')
      local col = child:lua('return vim.api.nvim_win_get_cursor(0)[2]')
      H.eq({ line = 1, character = H.utf16_len(line:sub(1, col)) }, params.position, 'the cursor, in UTF-16 units')
      H.eq(child:lua('return vim.uri_from_bufnr(0)'), params.textDocument.uri, 'the buffer')
    end,
  },
  {
    "inline_completion = 'builtin' hands ghost text to vim.lsp.inline_completion (a stand-in for 0.12's) and drives it with the keys",
    function()
      child:lua([[
        _G.builtin_calls = {}
        local function log(...) table.insert(_G.builtin_calls, { ... }) end
        local shown = true -- one candidate to accept, then nothing
        vim.lsp.inline_completion = {
          enable = function(on, filter) log('enable', on, filter.bufnr) end,
          get = function(opts)
            log('get', opts.bufnr)
            local had = shown
            shown = false
            return had
          end,
          select = function(opts) log('select', opts.count, opts.bufnr) end,
        }
        require('redraft').setup({ filetypes = {}, inline_completion = 'builtin' })
      ]])
      open({ 'def f():', 'x' }, 'utf-16')
      local bufnr = child:lua('return vim.api.nvim_get_current_buf()')
      H.eq({ { 'enable', true, bufnr } }, child:lua('return _G.builtin_calls'), 'enabled for the attached buffer')
      child:input('2GA<M-]><M-[><Tab>')
      child:wait('return #_G.builtin_calls >= 4', 'the keys to reach the built-in')
      H.eq({ { 'select', 1, bufnr }, { 'select', -1, bufnr }, { 'get', bufnr } },
        vim.list_slice(child:lua('return _G.builtin_calls'), 2, 4), 'next, previous, accept')
      H.eq('x', child:lua('return vim.fn.getline(2)'), 'Tab accepted (the built-in did), nothing inserted by the key')
      child:input('<Tab>')
      child:wait("return vim.fn.getline(2) ~= 'x'", 'Tab to fall back when nothing is shown')
      H.eq(nil, child:lua("return require('redraft.suggestion').state"), "the plugin's own ghost text stays out")
      child:lua('vim.cmd("Redraft disable")')
      child:wait('local c = _G.builtin_calls[#_G.builtin_calls]; return c[1] == "enable" and c[2] == false',
        'the built-in to be turned off with Redraft')
      child:lua([[
        vim.lsp.inline_completion = nil
        require('redraft').setup({ filetypes = {}, debounce_ms = 20, next_edit = { debounce_ms = 20 } })
      ]])
    end,
  },
  {
    'entering insert mode announces the cursor, in the negotiated encoding, unless turned off',
    function()
      for _, encoding in ipairs({ 'utf-16', 'utf-8' }) do
        open({ 'def f():', '    s = "café ☕"; t = s' }, encoding)
        child:lua('fake.log = {}')
        child:input('2G$i') -- before the last `s`, after the multi-byte text
        child:wait("return #fake.sent('redraft/cursor') == 1", 'the cursor to be announced')
        local sent = child:lua("return fake.sent('redraft/cursor')[1].params")
        local line = '    s = "café ☕"; t = '
        H.eq({ line = 1, character = units(line, encoding) }, sent.position, 'the position in ' .. encoding)
        H.eq(child:lua('return vim.uri_from_bufnr(0)'), sent.textDocument.uri, 'the document')
        child:input('<Esc>')
      end
      child:lua("require('redraft').setup({ filetypes = {}, announce_cursor = false, debounce_ms = 20 })")
      open({ 'x = 1' }, 'utf-16')
      child:lua('fake.log = {}')
      child:input('A')
      child:wait("return vim.api.nvim_get_mode().mode == 'i'", 'insert mode')
      child:input('<Esc>')
      child:wait("return vim.api.nvim_get_mode().mode == 'n'", 'normal mode')
      H.eq(0, child:lua("return #fake.sent('redraft/cursor')"), 'nothing announced')
      child:lua("require('redraft').setup({ filetypes = {}, debounce_ms = 20, next_edit = { debounce_ms = 20 } })")
    end,
  },
  {
    'a server that names no extensions in initialize is sent no redraft/cursor, redraft/nextEdit or redraft/feedback',
    function()
      child:lua('_G.extensions, fake.experimental = fake.experimental, nil')
      open({ 'def f(width):', LINE }, 'utf-16', '/tmp/redraft-fake-plain')
      child:lua('fake.experimental = _G.extensions; fake.log = {}')
      child:input('2G$i')
      child:wait("return vim.api.nvim_get_mode().mode == 'i'", 'insert mode')
      child:input('x')
      child:wait("return #fake.sent('textDocument/inlineCompletion') > 0", 'ghost text to be asked for all the same')
      child:lua([[
        require('redraft.next_edit').request(0)
        local client = vim.lsp.get_clients({ bufnr = 0, name = 'redraft' })[1]
        require('redraft.feedback').send(client.id, 0, { insertText = 'y', id = 'n1' }, false)
      ]])
      child:input('<Esc>')
      child:wait("return vim.api.nvim_get_mode().mode == 'n'", 'normal mode')
      -- Past the next-edit debounce after the change, so a request would have been sent.
      vim.uv.sleep(100)
      for _, method in ipairs({ 'redraft/cursor', 'redraft/nextEdit', 'redraft/feedback' }) do
        H.eq(0, child:lua('return #fake.sent(...)', method), method .. ' not sent')
      end
      H.truthy(not child:lua([[
        local client = vim.lsp.get_clients({ bufnr = 0, name = 'redraft' })[1]
        return require('redraft.server').offers(client, 'requests', 'redraft/nextEdit')
      ]]), 'offers() reads the absence')
    end,
  },
}

return suite
