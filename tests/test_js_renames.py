"""Renames in JavaScript and TypeScript: carried to the references of the binding the
renamed name resolves to, as the tree-sitter scopes say (``model/languages/js_scopes.py``),
and nowhere a name only looks alike; argument changes at JavaScript calls."""

from model.languages.js_scopes import MAX_BYTES, read_scopes
from model.next_edit.edit_patterns import CALL_SITE, RENAME, Change, PatternEdit, pattern_edits
from tests.test_edit_patterns import lines_of


def renamed(text: str, row: int, old: str, new: str, path: str, earlier: tuple[Change, ...] = ()) -> list[
        tuple[int, str]]:
    """The proposals after ``old`` became ``new`` (its first place) on line ``row`` of ``text``."""
    return [(e.start_line, e.new_text) for e in _edits(text, row, old, new, path, earlier)]


def _edits(text: str, row: int, old: str, new: str, path: str, earlier: tuple[Change, ...] = ()) -> list[
        PatternEdit]:
    lines = lines_of(text)
    before = lines[row]
    lines[row] = before.replace(old, new, 1)
    return pattern_edits(lines, Change(row, before, lines[row]), path, earlier, -1)


SHADOWED = """let count = 0;
function tick(step) {
  count += step;
  {
    const count = 10;
    log(count);
  }
  return count;
}
log(count);
"""


def test_a_let_renamed_is_carried_past_an_inner_block_that_declares_its_own() -> None:
    assert renamed(SHADOWED, 0, "count", "total", "tick.js") == [
        (2, "  total += step;\n"), (7, "  return total;\n"), (9, "log(total);\n")]


def test_the_inner_const_renamed_stays_in_its_block() -> None:
    assert renamed(SHADOWED, 4, "count", "limit", "tick.js") == [(5, "    log(limit);\n")]


PARAMETER = """export function format(value: number, unit: string): string {
  // value is in bytes; "value" is no name here
  const text = `${value} ${unit}`;
  return obj.value + { value: 1 }.value + text + value;
}
const value = 3;
"""


def test_a_parameter_renamed_reaches_its_function_and_a_template_literals_substitution_only() -> None:
    edits = _edits(PARAMETER, 0, "value", "amount", "format.ts")
    # The comment, the string, the template's text, the properties and the file's own `value` keep the word.
    assert [(e.start_line, e.new_text) for e in edits] == [
        (2, "  const text = `${amount} ${unit}`;\n"),
        (3, "  return obj.value + { value: 1 }.value + text + amount;\n")]
    assert all(e.kind == RENAME and e.calibration_key == "rename:near" for e in edits)


def test_a_rename_at_a_use_reaches_the_binding_above_it() -> None:
    assert renamed(PARAMETER, 2, "${value}", "${amount}", "format.ts") == [
        (3, "  return obj.value + { value: 1 }.value + text + amount;\n"),
        (0, "export function format(amount: number, unit: string): string {\n")]


DESTRUCTURED = """const { width, height: h } = size;
const [first, second] = pair;
draw(width, h, first, second, { width });
"""


def test_destructured_names_are_bindings_and_a_shorthand_property_is_their_use() -> None:
    assert renamed(DESTRUCTURED, 0, "h ", "tall ", "d.js") == [(2, "draw(width, tall, first, second, { width });\n")]
    assert renamed(DESTRUCTURED, 0, "width", "w", "d.js") == [(2, "draw(w, h, first, second, { w });\n")]
    assert renamed(DESTRUCTURED, 1, "second", "last", "d.js") == [(2, "draw(width, h, first, last, { width });\n")]


def test_a_property_renamed_is_not_carried_to_names_spelled_like_it() -> None:
    text = "const name = 1;\nconst o = { name: 2 };\nuse(o.name, name);\n"
    assert renamed(text, 2, "o.name", "o.title", "p.js") == []
    assert renamed(text, 1, "name:", "title:", "p.js") == []


def test_a_word_in_a_string_or_a_comment_renames_nothing() -> None:
    text = 'const total = 1;\nlog("total"); // total\nuse(total);\n'
    assert renamed(text, 1, '"total"', '"sum"', "s.js") == []
    assert renamed(text, 1, "// total", "// sum", "s.js") == []


def test_catch_for_of_and_import_bindings_are_carried() -> None:
    text = ('import { readFile as read } from "fs";\n'
            "for (const item of items) { try { read(item); } catch (err) { report(err, item); } }\n"
            "read(other);\n")
    assert renamed(text, 0, "read ", "load ", "r.mjs") == [
        (1, "for (const item of items) { try { load(item); } catch (err) { report(err, item); } }\n"),
        (2, "load(other);\n")]
    assert renamed(text, 1, "item of", "entry of", "r.mjs") == [
        (1, "for (const entry of items) { try { read(entry); } catch (err) { report(err, entry); } }\n")]
    assert renamed(text, 1, "(err)", "(error)", "r.mjs") == [
        (1, "for (const item of items) { try { read(item); } catch (error) { report(error, item); } }\n")]


def test_a_rename_half_made_is_carried_to_the_uses_still_under_the_old_name() -> None:
    # The binding and one use already renamed; the second use renamed now.
    text = "function f(total) {\n  a(total);\n  b(sum);\n  c(sum);\n}\n"
    earlier = (Change(0, "function f(sum) {\n", "function f(total) {\n"), Change(1, "  a(sum);\n", "  a(total);\n"))
    assert renamed(text, 2, "sum", "total", "f.js", earlier) == [(3, "  c(total);\n")]


def test_a_use_switched_to_another_variable_is_no_rename() -> None:
    text = "const raw = load();\nconst cleaned = clean(raw);\nsave(raw);\nlog(raw);\n"
    assert [e for e in _edits(text, 2, "raw", "cleaned", "s.ts") if e.kind == RENAME] == []


def test_a_half_typed_file_still_has_its_sound_parts_read() -> None:
    text = "function f(total) {\n  const x = total +\n  return total;\n}\nif (\n"
    assert renamed(text, 0, "total", "sum", "h.js") == [(1, "  const x = sum +\n"), (2, "  return sum;\n")]


def test_a_tsx_component_and_its_jsx_uses_are_renamed_together() -> None:
    text = "function Row() { return null; }\nexport const List = () => <div><Row /></div>;\n"
    assert renamed(text, 0, "Row", "Line", "l.tsx") == [
        (1, "export const List = () => <div><Line /></div>;\n")]


def test_a_file_beyond_the_cap_is_not_read() -> None:
    assert read_scopes(["x;\n" * (MAX_BYTES // 3 + 1)], "big.js") is None


def test_a_python_rename_is_read_off_its_lines_as_before() -> None:
    text = "def f(value):\n    return value + 1\n\n\ndef g(value):\n    return value\n"
    assert renamed(text, 0, "value", "amount", "m.py") == [(1, "    return amount + 1\n")]


def test_an_argument_added_at_one_javascript_call_is_added_at_the_others_not_at_definitions() -> None:
    text = ("function load(url) {\n  return fetch(url);\n}\nconst a = load(first);\n"
            "class Api {\n  load(url) {\n    return this.get(url);\n  }\n}\n"
            "items.forEach((item) => load(item));\nconst c = load(third);\n")
    edits = _edits(text, 3, "load(first)", "load(first, options)", "api.js")
    assert [(e.start_line, e.new_text, e.kind) for e in edits] == [
        (9, "items.forEach((item) => load(item, options));\n", CALL_SITE),
        (10, "const c = load(third, options);\n", CALL_SITE)]


MEMBERS = """class Counter {
  count = 0;
  constructor(start) { this.count = start; }
  bump() { this.count += 1; return other.count; }
  read() { const get = () => this.count; return get(); }
}
class Other { count() { return this.count; } }
"""


def test_a_member_renamed_through_this_is_carried_to_its_places_in_its_class_alone() -> None:
    # Its field's definition and every `this.count` of the class (an arrow's `this` too);
    # another object's `count` and another class's member are left alone.
    assert renamed(MEMBERS, 2, "this.count", "this.total", "c.ts") == [
        (3, "  bump() { this.total += 1; return other.count; }\n"), (1, "  total = 0;\n"),
        (4, "  read() { const get = () => this.total; return get(); }\n")]
    # Renamed where it is defined: a method's calls through `this`.
    text = "class Api {\n  load(url) { return url; }\n  all() { return this.load(a) + this.load(b); }\n}\n"
    assert renamed(text, 1, "load(", "fetch(", "a.js") == [
        (2, "  all() { return this.fetch(a) + this.fetch(b); }\n")]


def test_a_name_with_a_dollar_is_one_name() -> None:
    text = "function f($el) {\n  const w = $el.width;\n  return $el.height + w;\n}\n"
    assert renamed(text, 0, "$el", "$node", "f.js") == [
        (1, "  const w = $node.width;\n"), (2, "  return $node.height + w;\n")]


def test_an_object_s_method_and_a_function_s_this_inside_the_class_are_not_its_member() -> None:
    text = ("class Panel {\n  count = 0;\n  bump() { const made = { count() { return 1; } }; this.count += 1; }\n"
            "  read() { function f() { return this.count; } return this.count; }\n}\n")
    assert renamed(text, 1, "count", "total", "p.ts") == [
        (2, "  bump() { const made = { count() { return 1; } }; this.total += 1; }\n"),
        (3, "  read() { function f() { return this.count; } return this.total; }\n")]


def test_a_member_set_only_through_this_lives_in_its_class_however_far_its_uses() -> None:
    filler = "".join(f"  step{n}() {{ return {n}; }}\n" for n in range(40))
    text = (f"class Conn {{\n  constructor(url) {{ this.url = url; }}\n{filler}"
            "  open() { return dial(this.url); }\n}\n")
    edits = _edits(text, 1, "this.url", "this.address", "c.js")
    assert [(e.start_line, e.in_function) for e in edits] == [(42, True)]


PARAMETER_PROPERTY = """class Client {
  constructor(private readonly base: string, retries: number) {
    log(base, retries);
  }
  url(path: string) { return this.base + path; }
  other(o: Client) { return o.base; }
}
"""


def test_a_typescript_parameter_property_is_renamed_with_its_uses_through_this_whichever_is_renamed() -> None:
    # Renamed at the parameter: its use in the constructor and `this.base` in the class;
    # another instance's `o.base` is left alone (no tree says whose it is).
    assert sorted(renamed(PARAMETER_PROPERTY, 1, "base", "root", "client.ts")) == [
        (2, "    log(root, retries);\n"), (4, "  url(path: string) { return this.root + path; }\n")]
    # Renamed through `this`: the parameter and its use in the constructor.
    assert sorted(renamed(PARAMETER_PROPERTY, 4, "this.base", "this.root", "client.ts")) == [
        (1, "  constructor(private readonly root: string, retries: number) {\n"), (2, "    log(root, retries);\n")]


def test_a_constructor_s_plain_parameter_is_not_a_member() -> None:
    # `retries` has no modifier: a parameter of the constructor only.
    text = PARAMETER_PROPERTY.replace("this.base + path", "this.retries + path")
    assert renamed(text, 1, "retries", "tries", "client.ts") == [(2, "    log(base, tries);\n")]
