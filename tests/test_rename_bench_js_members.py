"""`redraft bench rename --members` in JavaScript and TypeScript: a class's member renamed by
hand through `this.` or where it is defined, through the real server."""

import sys
from pathlib import Path

from benchmarks.rename import CHAIN_DONE, format_rename, run_rename_bench
from benchmarks.rename_tree_members import member_cases

SERVER = [sys.executable, "-m", "lsp_server", "serve"]

COUNTER = """class Counter {
  count = 0;
  constructor(start) { this.count = start; }
  bump() { this.count += 1; return other.count; }
  read() { const get = () => this.count; return get(); }
  reset() { this.clear(); }
  clear() { this.#hidden = 0; }
  #hidden = 1;
  get value() { return 1; }
  set value(v) { other.value = v; }
  shape() {
    this.size = 1;
    return class { grow() { this.height = this.height + this.size; } };
  }
}
"""

STORE = """class Store<T> {
  private items: T[] = [];
  constructor(private readonly limit: number) {}
  add(item: T): void;
  add(item: T, at?: number): void {
    if (this.items.length < this.limit) this.items.push(item);
  }
  addAll(all: T[]) { all.forEach((x) => this.add(x)); }
  options: { add(): void } = { add() {} };
}
"""


def _lines_of(text: str, path: str) -> dict[str, list[int]]:
    """Each drawn case's name and the lines of its places."""
    cases = member_cases(Path(path), text, {})
    assert cases is not None
    source = text.encode("utf-8")
    assert all(kind == "member" for _, kind, _ in cases)
    return {name: [source[:at].count(b"\n") for at in places] for name, _, places in cases}


def test_a_javascript_member_s_places_are_its_field_its_methods_and_this_uses_in_its_own_class() -> None:
    # `count`: the field and three `this.count` (the arrow's too), not `other.count`; `clear`:
    # called through `this` and defined. `value` is only defined, `#hidden` is private, `size`
    # is named once in each class, and the nested class's `height` is that class's own.
    assert _lines_of(COUNTER, "counter.js") == {"count": [1, 2, 3, 4], "clear": [5, 6], "height": [12, 12]}


def test_a_typescript_member_s_places_include_its_overloads_not_a_type_s_or_an_object_s_method() -> None:
    # `add`: its overload signature, its definition and its call through an arrow's `this`;
    # the `add` of the field's type and of the object literal belong to other objects.
    # `limit` is a parameter property: the parameter and `this.limit`.
    assert _lines_of(STORE, "store.ts") == {"add": [3, 4, 7], "items": [1, 5, 5], "limit": [2, 5]}


def test_a_parameter_property_s_places_add_its_uses_in_the_constructor_unless_it_declares_the_name_again() -> None:
    text = ("class Client {\n  constructor(private base: string, public log: Log) {\n    check(base);\n"
            "    const f = (log) => log;\n  }\n  url() { return this.base + this.log.name; }\n}\n")
    assert _lines_of(text, "client.ts") == {"base": [1, 2, 5]}


def test_files_that_are_not_scripts_or_do_not_parse_give_no_member_cases() -> None:
    assert member_cases(Path("a.py"), "class A:\n    pass\n", {}) is None
    assert member_cases(Path("a.ts"), "class A { count = ; }\n", {}) is None


SETTINGS = """export class Settings {
  private theme = "light";
  toggle(): void {
    this.theme = this.theme === "light" ? "dark" : "light";
    this.save();
  }
  save(): void {
    localStorage.setItem("theme", this.theme);
  }
}
"""


def test_a_typescript_member_renamed_through_this_is_renamed_at_every_place_in_its_class(tmp_path: Path) -> None:
    (tmp_path / "settings.ts").write_text(SETTINGS)
    (tmp_path / "reader.py").write_text("class Reader:\n    def open(self, path):\n        self.path = path\n\n"
                                        "    def name(self):\n        return self.path\n")
    report = run_rename_bench(tmp_path, 10, SERVER, members=True)
    assert sorted(o.language for o in report.outcomes) == ["python", "typescript", "typescript"]
    # `theme` (the field and three `this.theme`) and `save` (a call and its definition): each
    # chain ends with every place renamed and nothing else.
    assert all(o.shown and o.right and o.chain == CHAIN_DONE for o in report.outcomes)
    printed = format_rename(report, 0.5)
    assert "3 member renames in 2 files" in printed
    assert "typescript: member" in printed and "python: member" in printed
