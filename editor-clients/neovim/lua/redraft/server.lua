-- Starting, finding and stopping the `redraft serve` language server through vim.lsp.
-- One client per project root, shared by every buffer of a configured filetype in it.

local config = require('redraft.config')

local M = {}

M.name = 'redraft'

---The last error or warning the server sent with window/showMessage (e.g. a model that
---failed to load), kept for :checkhealth and :Redraft status.
---@type string|nil
M.last_message = nil

---The command that runs the server: the configured one, or `redraft serve` from PATH.
---@return string[]
function M.cmd()
  return config.get().cmd or { 'redraft', 'serve' }
end

---@return boolean found, string executable
function M.executable()
  local exe = M.cmd()[1]
  return vim.fn.executable(exe) == 1, exe
end

---@param bufnr integer
---@return vim.lsp.Client|nil
function M.client(bufnr)
  return vim.lsp.get_clients({ bufnr = bufnr, name = M.name })[1]
end

---@return vim.lsp.Client[]
function M.clients()
  return vim.lsp.get_clients({ name = M.name })
end

local function capabilities()
  local caps = vim.lsp.protocol.make_client_capabilities()
  local encodings = config.get().position_encodings
  if encodings then
    caps.general = caps.general or {}
    caps.general.positionEncodings = encodings
  end
  return caps
end

-- Keep the server's messages for health/status, then show them as Neovim would.
local function on_show_message(err, result, ctx)
  if result and result.type and result.type <= vim.lsp.protocol.MessageType.Warning then
    M.last_message = result.message
  end
  return vim.lsp.handlers['window/showMessage'](err, result, ctx)
end

---Whether the server names `method` among its `kind` ('requests' or 'notifications') in its
---`initialize` result (`capabilities.experimental.redraft`). Methods beyond LSP are sent
---only to a server that names them: another server, or an older Redraft, would answer a
---request with an error and drop a notification unread.
---@param client vim.lsp.Client
---@param kind 'requests'|'notifications'
---@param method string
---@return boolean
function M.offers(client, kind, method)
  local node = client.server_capabilities
  for _, key in ipairs({ 'experimental', 'redraft', kind }) do
    if type(node) ~= 'table' then
      return false
    end
    node = node[key]
  end
  return type(node) == 'table' and vim.tbl_contains(node, method)
end

---@param bufnr integer
---@return boolean
function M.wants(bufnr)
  return vim.bo[bufnr].buftype == ''
    and vim.tbl_contains(config.get().filetypes, vim.bo[bufnr].filetype)
end

---Attach the server to `bufnr` (starting it if this root has none yet).
---@param bufnr integer
---@return integer|nil client_id
function M.attach(bufnr)
  if not M.wants(bufnr) then
    return nil
  end
  local found, exe = M.executable()
  if not found then
    vim.notify_once(
      ('redraft: server command %q not found; set `cmd` in setup()'):format(exe),
      vim.log.levels.WARN
    )
    return nil
  end
  local opts = config.get()
  -- A file outside any project still gets a server, rooted at its own folder.
  local root = vim.fs.root(bufnr, opts.root_markers)
    or vim.fs.dirname(vim.api.nvim_buf_get_name(bufnr))
  if root == nil or root == '' or root == '.' then
    root = vim.fn.getcwd()
  end
  return vim.lsp.start({
    name = M.name,
    cmd = M.cmd(),
    root_dir = root,
    -- An empty Lua table would go out as a JSON array, not an object: send none instead.
    init_options = next(opts.init_options) ~= nil and opts.init_options or nil,
    capabilities = capabilities(),
    handlers = { ['window/showMessage'] = on_show_message },
  }, { bufnr = bufnr })
end

---Stop every Redraft client (used by :Redraft disable).
function M.stop_all()
  for _, client in ipairs(M.clients()) do
    client:stop()
  end
end

return M
