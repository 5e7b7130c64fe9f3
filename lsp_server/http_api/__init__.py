"""``redraft http``: the engine the language server uses, over HTTP, in the shapes other
tools already speak (OpenAI-style FIM completions with Mercury's ``diffusing`` stream,
llama.cpp's ``/infill``)."""
