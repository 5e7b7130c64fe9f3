-- Pure pieces, run in the test runner's own Neovim (no server): option validation, reading
-- an answer's range in each encoding, and what the partial accepts take.

local H = require('helpers')

vim.opt.rtp:prepend(H.plugin_dir)
local config = require('redraft.config')
local items = require('redraft.items')

local function fails_with(opts, fragment)
  local ok, err = pcall(config.set, opts)
  H.truthy(not ok, 'setup should reject ' .. vim.inspect(opts))
  H.truthy(tostring(err):find(fragment, 1, true), ('error %q should mention %q'):format(tostring(err), fragment))
end

return {
  name = 'units',
  tests = {
    {
      'setup options are merged over the defaults and lists replace the defaults',
      function()
        local merged = config.set({ filetypes = { 'lua' }, keymaps = { accept = false } })
        H.eq({ 'lua' }, merged.filetypes)
        H.eq(false, merged.keymaps.accept)
        H.eq('<M-w>', merged.keymaps.accept_word, 'other keys keep their default')
        merged = config.set({ next_edit = { keymaps = { jump = false } } })
        H.eq({ jump = false, accept = '<M-y>', dismiss = '<M-e>' }, merged.next_edit.keymaps, 'next-edit keys merge too')
        H.eq(300, merged.next_edit.debounce_ms)
        config.set(nil)
      end,
    },
    {
      'by default every file the server serves is wanted, and a narrowed list leaves the rest alone',
      function()
        local server = require('redraft.server')
        local bufnr = vim.api.nvim_create_buf(true, false)
        local function wanted(filetype)
          vim.bo[bufnr].filetype = filetype
          return server.wants(bufnr)
        end
        local ok, err = pcall(function()
          config.set(nil)
          -- The server's extensions, as Neovim's own detection names them (it reads a `.ts`
          -- buffer's first line to tell TypeScript from Qt's XML).
          vim.api.nvim_buf_set_lines(bufnr, 0, -1, false, { 'let x = 1' })
          for _, name in ipairs({ 'a.py', 'a.js', 'a.mjs', 'a.cjs', 'a.jsx', 'a.ts', 'a.tsx' }) do
            vim.api.nvim_buf_set_name(bufnr, vim.fn.tempname() .. '-' .. name)
            local filetype = vim.filetype.match({ buf = bufnr })
            H.truthy(wanted(filetype), ('%s (%s) is wanted by default'):format(name, tostring(filetype)))
          end
          H.eq(false, wanted('lua'), 'lua is not')
          config.set({ filetypes = { 'python' } })
          H.eq(false, wanted('typescript'), 'narrowed: typescript is not')
          H.eq(true, wanted('python'), 'narrowed: python still is')
        end)
        vim.api.nvim_buf_delete(bufnr, { force = true })
        config.set(nil)
        H.truthy(ok, tostring(err))
      end,
    },
    {
      "a JavaScript package's folder is its root, unless a repository around it is",
      function()
        local dir = H.tempdir()
        vim.fn.mkdir(dir .. '/alone/src', 'p')
        vim.fn.mkdir(dir .. '/repo/.git', 'p')
        vim.fn.mkdir(dir .. '/repo/web/src', 'p')
        vim.fn.writefile({ '{}' }, dir .. '/alone/package.json')
        vim.fn.writefile({ '{}' }, dir .. '/repo/web/package.json')
        local roots = {}
        local start = vim.lsp.start
        vim.lsp.start = function(server_config)
          roots[#roots + 1] = server_config.root_dir
          return 1
        end
        local ok, err = pcall(function()
          config.set({ cmd = { 'sh' } })
          for _, path in ipairs({ '/alone/src/main.js', '/repo/web/src/app.ts' }) do
            local bufnr = vim.api.nvim_create_buf(true, false)
            vim.api.nvim_buf_set_name(bufnr, dir .. path)
            vim.bo[bufnr].filetype = path:match('%.ts$') and 'typescript' or 'javascript'
            require('redraft.server').attach(bufnr)
            vim.api.nvim_buf_delete(bufnr, { force = true })
          end
        end)
        vim.lsp.start = start
        config.set(nil)
        vim.fn.delete(dir, 'rf')
        H.truthy(ok, tostring(err))
        H.eq({ dir .. '/alone', dir .. '/repo' }, roots)
      end,
    },
    {
      'bad setup options are rejected with the option name',
      function()
        fails_with({ debounce_ms = -1 }, 'debounce_ms')
        fails_with({ keymaps = { accept = 1 } }, 'keymaps.accept')
        fails_with({ keymaps = { acept = '<Tab>' } }, 'keymaps.acept')
        fails_with({ position_encodings = { 'latin1' } }, 'position_encodings')
        fails_with({ cmd = {} }, 'cmd')
        fails_with({ next_edit = { keymaps = { jumpp = '<M-n>' } } }, 'next_edit.keymaps.jumpp')
        fails_with({ next_edit = { keymaps = { accept = 1 } } }, 'next_edit.keymaps.accept')
        fails_with({ next_edit = { debounce_ms = 1.5 } }, 'next_edit.debounce_ms')
        fails_with({ inline_completion = 'both' }, 'inline_completion')
        config.set(nil)
      end,
    },
    {
      'setup() with a bad option says which, without a traceback, and does not start',
      function()
        local said = {}
        local notify = vim.notify
        vim.notify = function(msg, level)
          said[#said + 1] = { msg, level }
        end
        local ok, err = pcall(require('redraft').setup, { next_edit = { debounce_ms = -5 } })
        vim.notify = notify
        H.truthy(ok, 'setup() does not raise: ' .. tostring(err))
        H.eq(1, #said, 'one message')
        H.eq(vim.log.levels.ERROR, said[1][2], 'an error')
        H.eq('redraft: not started, bad option: next_edit.debounce_ms: expected integer >= 0, got -5', said[1][1])
        H.eq(false, require('redraft').is_enabled(), 'not enabled')
        config.set(nil)
      end,
    },
    {
      'a range after multi-byte text is read in the negotiated encoding',
      function()
        local line = 'x = "é🙂" + n' -- é: 2 bytes, 1 UTF-16 unit; 🙂: 4 bytes, 2 units
        local col = #line
        local result = { items = { { insertText = 'ame', range = {
          start = { line = 3, character = 13 }, ['end'] = { line = 3, character = 13 } } } } }
        local got = items.from_response(result, 3, col, line, 'utf-16')
        H.eq(1, #got)
        H.eq('ame', got[1].text)
        H.eq(col, got[1].end_col)
        result.items[1].range.start.character, result.items[1].range['end'].character = col, col
        H.eq('ame', items.from_response(result, 3, col, line, 'utf-8')[1].text)
      end,
    },
    {
      'an item replacing typed text keeps only the part after the cursor; others are skipped',
      function()
        local line = 'import o'
        local range = { start = { line = 0, character = 7 }, ['end'] = { line = 0, character = 8 } }
        local got = items.from_response({ { insertText = 'os', range = range } }, 0, 8, line, 'utf-16')
        H.eq('s', got[1].text)
        H.eq({}, items.from_response({ { insertText = 'xyz', range = range } }, 0, 8, line, 'utf-16'))
        H.eq({}, items.from_response(vim.NIL, 0, 8, line, 'utf-16'))
        H.eq('b', items.from_response({ { insertText = 'b' } }, 0, 8, line, 'utf-16')[1].text, 'no range: at the cursor')
      end,
    },
    {
      'accept word and accept line take the expected pieces',
      function()
        H.eq(' foo', items.next_word(' foo(bar)'))
        H.eq('(', items.next_word('(bar)'))
        H.eq('\n    ', items.next_word('\n    return x'))
        H.eq('héllo', items.next_word('héllo wörld'))
        H.eq(' + b', items.next_line(' + b\n    return'))
        H.eq('\n    return', items.next_line('\n    return\nx'))
      end,
    },
    {
      'with no init_options the server is sent no initializationOptions, not an empty JSON array',
      function()
        local started = {}
        local start = vim.lsp.start
        vim.lsp.start = function(server_config)
          started[#started + 1] = server_config
          return 1
        end
        local ok, err = pcall(function()
          local bufnr = vim.api.nvim_create_buf(true, false)
          vim.bo[bufnr].filetype = 'python'
          config.set({ cmd = { 'sh' } })
          require('redraft.server').attach(bufnr)
          config.set({ cmd = { 'sh' }, init_options = { confidenceThreshold = 0.5 } })
          require('redraft.server').attach(bufnr)
          vim.api.nvim_buf_delete(bufnr, { force = true })
        end)
        vim.lsp.start = start
        config.set(nil)
        H.truthy(ok, tostring(err))
        H.eq(2, #started, 'two starts')
        H.eq(nil, started[1].init_options, 'the defaults: none sent')
        H.eq('{"confidenceThreshold":0.5}', vim.json.encode(started[2].init_options), 'set: sent as an object')
      end,
    },
  },
}
