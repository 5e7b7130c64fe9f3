-- Turning an inlineCompletion response into candidates the ghost text can show, and
-- splitting a candidate into the pieces that partial accepts take. Pure functions: no
-- buffer or window state, so they can be reasoned about (and tested) alone.

local M = {}

---@class redraft.Candidate
---@field text string        Text to insert at the cursor (what is before the cursor already removed).
---@field end_col integer     Byte column on the cursor's line where the replaced range ends (>= cursor).
---@field item table          The server's InlineCompletionItem as received.

---Byte column of an LSP character offset on `line`, in the client's position encoding.
---@param line string
---@param character integer
---@param encoding string 'utf-8'|'utf-16'|'utf-32'
---@return integer
function M.byte_col(line, character, encoding)
  -- Past the end (a server counting a newline) clamps to the end of the line.
  local ok, col = pcall(vim.str_byteindex, line, encoding, character, false)
  return ok and math.min(col, #line) or #line
end

---The server's item text, or nil when it is not plain text (snippets aren't drawn).
---@param item table
---@return string|nil
local function insert_text(item)
  local text = item.insertText
  if type(text) == 'table' then
    return nil -- StringValue snippets would need expansion; the Redraft server sends plain text
  end
  return type(text) == 'string' and text:gsub('\r\n?', '\n') or nil
end

---Candidates from a response (an InlineCompletionList, an item array, or nil), for a
---cursor at byte column `col` of 0-based `row` whose text is `line`.
---
---An item's `range` is what it replaces (absent: the empty range at the cursor). Ghost
---text can only show an item whose range starts on the cursor's line at or before the
---cursor and whose replaced text before the cursor is the start of its insertText; that
---part is already on screen, so the candidate keeps only the rest.
---@param result table|nil
---@param row integer
---@param col integer
---@param line string
---@param encoding string
---@return redraft.Candidate[]
function M.from_response(result, row, col, line, encoding)
  local items = type(result) == 'table' and (result.items or result) or {}
  local candidates, seen = {}, {}
  for _, item in ipairs(items) do
    local text = insert_text(item)
    local start_col, end_col = col, col
    local range = item.range
    if text and range then
      if range.start.line ~= row or range['end'].line ~= row then
        text = nil -- a multi-line range can't be previewed at the cursor
      else
        start_col = M.byte_col(line, range.start.character, encoding)
        end_col = math.max(col, M.byte_col(line, range['end'].character, encoding))
      end
    end
    if text and start_col <= col then
      local typed = line:sub(start_col + 1, col)
      if text:sub(1, #typed) == typed then
        text = text:sub(#typed + 1)
      else
        text = nil
      end
    else
      text = nil
    end
    if text and text ~= '' and not seen[text] then
      seen[text] = true
      candidates[#candidates + 1] = { text = text, end_col = end_col, item = item }
    end
  end
  return candidates
end

-- A "word" in the Unicode-agnostic sense: letters, digits, underscore and any non-ASCII byte.
local WORD = '[%w_\128-\255]'

---The next word of `rest`: a line break with the next line's indentation, or leading
---blanks plus a run of word characters, or plus a run of punctuation.
---@param rest string
---@return string
function M.next_word(rest)
  return rest:match('^\n[ \t]*')
    or rest:match('^[ \t]*' .. WORD .. '+')
    or rest:match('^[ \t]*[^%w_\128-\255%s]+')
    or rest:match('^[ \t]+')
    or rest:sub(1, 1)
end

---The rest of the current line of `rest`; at a line break, the break and the whole next line.
---@param rest string
---@return string
function M.next_line(rest)
  return rest:match('^\n[^\n]*') or rest:match('^[^\n]+') or rest
end

return M
