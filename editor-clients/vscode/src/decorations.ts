// How a next-edit proposal is drawn in an editor: the text it removes struck through, the
// text it adds as ghost text after it, a gutter marker while the cursor is elsewhere.

import * as vscode from "vscode";

export interface Drawing {
  deleted: vscode.Range | undefined;
  insertAt: vscode.Position;
  ghost: string; // "" when nothing is inserted
  gutterAt: vscode.Position | undefined;
}

export class NextEditDecorations implements vscode.Disposable {
  private readonly deleted = vscode.window.createTextEditorDecorationType({
    textDecoration: "line-through",
    backgroundColor: new vscode.ThemeColor("diffEditor.removedTextBackground"),
  });
  private readonly inserted = vscode.window.createTextEditorDecorationType({});
  private readonly gutter: vscode.TextEditorDecorationType;

  constructor(extensionUri: vscode.Uri) {
    this.gutter = vscode.window.createTextEditorDecorationType({
      gutterIconPath: vscode.Uri.joinPath(extensionUri, "media", "next-edit.svg"),
      gutterIconSize: "contain",
      overviewRulerColor: new vscode.ThemeColor("editorInfo.foreground"),
      overviewRulerLane: vscode.OverviewRulerLane.Right,
    });
  }

  draw(editor: vscode.TextEditor, drawing: Drawing): void {
    editor.setDecorations(this.deleted, drawing.deleted ? [drawing.deleted] : []);
    const after = {
      contentText: drawing.ghost,
      color: new vscode.ThemeColor("editorGhostText.foreground"),
      backgroundColor: new vscode.ThemeColor("diffEditor.insertedTextBackground"),
    };
    const at = new vscode.Range(drawing.insertAt, drawing.insertAt);
    editor.setDecorations(this.inserted, drawing.ghost ? [{ range: at, renderOptions: { after } }] : []);
    const gutter = drawing.gutterAt;
    editor.setDecorations(this.gutter, gutter ? [new vscode.Range(gutter, gutter)] : []);
  }

  hideGutter(editor: vscode.TextEditor): void {
    editor.setDecorations(this.gutter, []);
  }

  clear(editor: vscode.TextEditor): void {
    for (const type of [this.deleted, this.inserted, this.gutter]) {
      editor.setDecorations(type, []);
    }
  }

  dispose(): void {
    for (const type of [this.deleted, this.inserted, this.gutter]) {
      type.dispose();
    }
  }
}
