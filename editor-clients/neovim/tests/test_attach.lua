-- Which buffers get a server: a child Neovim with the plugin's default filetypes and the
-- real `redraft serve`, opening JavaScript and TypeScript files as a user would (`:edit`,
-- Neovim's own filetype detection, the plugin's FileType autocmd).

local H = require('helpers')

local child, dir
local suite = { name = 'attach' }

function suite.setup()
  dir = H.tempdir()
  child = H.child({ XDG_STATE_HOME = dir })
  child:lua(
    [[
    local cmd, init_options = ...
    require('redraft').setup({ cmd = cmd, init_options = init_options })
    ]],
    H.server_cmd(),
    H.init_options
  )
end

function suite.teardown()
  child:stop()
  vim.fn.delete(dir, 'rf')
end

local ATTACHED = [[
  local client = vim.lsp.get_clients({ bufnr = 0, name = 'redraft' })[1]
  return { filetype = vim.bo.filetype, client = client and client.id or false }
]]

suite.tests = {
  {
    'with the default filetypes, opening a .ts file starts a Redraft client for it',
    function()
      child:open(dir .. '/greet.ts', { 'export function greet(name: string): string {', '  return name' })
      local got = child:lua(ATTACHED)
      H.eq('typescript', got.filetype)
      H.truthy(got.client, 'a redraft client on the .ts buffer')
    end,
  },
  {
    'JavaScript and the other TypeScript files join the same client',
    function()
      local first = child:lua(ATTACHED).client
      local files = {
        ['main.js'] = 'javascript',
        ['module.mjs'] = 'javascript',
        ['config.cjs'] = 'javascript',
        ['view.jsx'] = 'javascriptreact',
        ['view.tsx'] = 'typescriptreact',
      }
      for name, filetype in pairs(files) do
        child:open(dir .. '/' .. name, { 'const answer = 4' })
        H.eq({ filetype = filetype, client = first }, child:lua(ATTACHED), name)
      end
    end,
  },
  {
    'a file of a filetype not in the list gets no client',
    function()
      child:open(dir .. '/last.ts', { 'let x = 1' }) -- the client is up and answering
      child:lua('vim.cmd.edit(...)', dir .. '/notes.lua')
      H.eq({ filetype = 'lua', client = false }, child:lua(ATTACHED))
    end,
  },
}

return suite
