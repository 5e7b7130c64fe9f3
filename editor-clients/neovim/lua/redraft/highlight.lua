-- Highlight groups, linked to standard groups with `default = true`: a colour scheme or
-- the user's own :highlight for a Redraft* group always wins.

local M = {}

M.groups = {
  RedraftSuggestion = 'Comment', -- the ghost text itself
  RedraftAnnotation = 'NonText', -- the "2/3" candidate marker
  RedraftNextEditDelete = 'DiffDelete', -- text a proposed next edit removes
  RedraftNextEditInsert = 'DiffAdd', -- text it adds (virtual text)
  RedraftNextEditSign = 'DiagnosticSignHint', -- the sign on its line
  RedraftNextEditHint = 'DiagnosticHint', -- "next edit: line N" when it is off screen
}

function M.define()
  for group, link in pairs(M.groups) do
    vim.api.nvim_set_hl(0, group, { link = link, default = true })
  end
end

return M
