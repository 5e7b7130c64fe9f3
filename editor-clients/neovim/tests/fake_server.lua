-- A stand-in language server that lives inside the child Neovim (vim.lsp accepts a function
-- as `cmd`), for tests of what the plugin draws and sends given answers written by hand.
-- It answers `initialize` (with the encoding the test chose), records every request and
-- notification, keeps each document's version from didOpen/didChange, and answers
-- `redraft/nextEdit` and `textDocument/inlineCompletion` through functions the test sets.
--
--   local fake = dofile(path)            -- in the child; also kept as _G.fake
--   fake.encoding = 'utf-8'              -- before starting; default: the client's first offer
--   fake.experimental = nil              -- before starting: a server that names no extensions
--   fake.next_edit = function(params, version) return { items = { ... } } end
--   local client_id = fake.start(bufnr)  -- a client named 'redraft' on bufnr

-- What `initialize` names beyond LSP, as the real server does; a test may set it to nil.
local EXTENSIONS = {
  redraft = {
    requests = { 'redraft/nextEdit' },
    notifications = { 'redraft/cursor', 'redraft/feedback' },
    acceptedCommand = 'redraft.accepted',
  },
}

local M = { log = {}, versions = {}, encoding = nil, next_edit = nil, inline = nil, experimental = EXTENSIONS }

local function record(kind, method, params)
  M.log[#M.log + 1] = { kind = kind, method = method, params = params }
end

local function answer(method, params)
  if method == 'initialize' then
    local offered = vim.tbl_get(params, 'capabilities', 'general', 'positionEncodings') or { 'utf-16' }
    return {
      capabilities = {
        positionEncoding = M.encoding or offered[1],
        textDocumentSync = { openClose = true, change = 2 },
        inlineCompletionProvider = true,
        executeCommandProvider = { commands = { 'redraft.accepted' } },
        experimental = M.experimental,
      },
      serverInfo = { name = 'fake-redraft' },
    }
  end
  local uri = vim.tbl_get(params or {}, 'textDocument', 'uri')
  if method == 'redraft/nextEdit' and M.next_edit then
    return M.next_edit(params, M.versions[uri])
  end
  if method == 'textDocument/inlineCompletion' and M.inline then
    return M.inline(params, M.versions[uri])
  end
  return vim.NIL
end

local function track(method, params)
  if method == 'textDocument/didOpen' then
    M.versions[params.textDocument.uri] = params.textDocument.version
  elseif method == 'textDocument/didChange' then
    M.versions[params.textDocument.uri] = params.textDocument.version
  end
end

---The `cmd` function vim.lsp calls with its dispatchers: a JSON-RPC peer without a process.
function M.cmd(dispatchers)
  local closing, next_id = false, 0
  local peer = {}
  function peer.request(method, params, callback, notify_reply_callback)
    next_id = next_id + 1
    local id = next_id
    record('request', method, params)
    -- Answer on a later tick, as a real server would.
    vim.schedule(function()
      callback(nil, answer(method, params))
      if notify_reply_callback then
        notify_reply_callback(id)
      end
    end)
    return true, id
  end
  function peer.notify(method, params)
    record('notify', method, params)
    track(method, params)
    if method == 'exit' then
      closing = true
      vim.schedule(function()
        dispatchers.on_exit(0, 0)
      end)
    end
    return true
  end
  function peer.is_closing()
    return closing
  end
  function peer.terminate()
    closing = true
  end
  return peer
end

---Start a client named like the real one on `bufnr` (the plugin's LspAttach hook takes it).
---A different `root` starts a separate client (vim.lsp reuses one per name and root).
---@return integer client_id
function M.start(bufnr, root)
  return assert(vim.lsp.start({
    name = 'redraft',
    cmd = M.cmd,
    root_dir = root or vim.fn.getcwd(),
    capabilities = (function()
      local caps = vim.lsp.protocol.make_client_capabilities()
      caps.general.positionEncodings = M.offer or { 'utf-16' }
      return caps
    end)(),
  }, { bufnr = bufnr }))
end

---The recorded messages with this method (requests and notifications).
function M.sent(method)
  return vim.tbl_filter(function(entry)
    return entry.method == method
  end, M.log)
end

_G.fake = M
return M
