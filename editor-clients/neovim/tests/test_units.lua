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
