// Where the cursor comes to rest after a click or the arrow keys, the server hears of it
// (`redraft/cursor`): it answers that place at once, so the context there is encoded before
// the first keystroke, which then costs what typing on costs.

import * as vscode from "vscode";
import type { LanguageClient } from "vscode-languageclient/node";

import { announcesCursor, ChangeClock, CURSOR_REST_MS, Debouncer, serverOffers } from "./logic";
import { readSettings } from "./settings";

export const CURSOR = "redraft/cursor";

export class CursorAnnouncer implements vscode.Disposable {
  private readonly changes = new ChangeClock();
  private editor: vscode.TextEditor | undefined;
  private readonly debounce = new Debouncer(() => this.announce());

  constructor(
    private readonly client: () => LanguageClient | undefined,
    private readonly log: vscode.LogOutputChannel,
  ) {}

  onDocumentChanged(event: vscode.TextDocumentChangeEvent): void {
    if (event.contentChanges.length > 0) {
      this.changes.changed(event.document.uri.toString(), Date.now());
    }
  }

  onSelectionChanged(event: vscode.TextEditorSelectionChangeEvent): void {
    this.debounce.cancel();
    const settings = readSettings();
    const move = {
      enabled: settings.announceCursor,
      carets: event.selections.length,
      empty: event.selections.every((selection) => selection.isEmpty),
      msSinceChange: this.changes.msSinceChange(event.textEditor.document.uri.toString(), Date.now()),
      languageId: event.textEditor.document.languageId,
      languages: settings.languages,
    };
    if (announcesCursor(move)) {
      this.editor = event.textEditor;
      this.debounce.schedule(CURSOR_REST_MS);
    }
  }

  private announce(): void {
    const client = this.client();
    const editor = this.editor;
    // The same document still in front (compared by document: VS Code may hand out a new
    // TextEditor object for the same editor), and not edited since the cursor came to rest.
    if (client === undefined || !client.isRunning() || editor === undefined ||
        !serverOffers(client.initializeResult?.capabilities.experimental, "notifications", CURSOR)) {
      return;
    }
    const uri = editor.document.uri.toString();
    if (vscode.window.activeTextEditor?.document.uri.toString() !== uri ||
        this.changes.msSinceChange(uri, Date.now()) < CURSOR_REST_MS) {
      return;
    }
    const converter = client.code2ProtocolConverter;
    const position = editor.selection.active;
    client
      .sendNotification(CURSOR, {
        textDocument: converter.asTextDocumentIdentifier(editor.document),
        position: converter.asPosition(position),
      })
      .then(
        () => this.log.info(`${CURSOR}: Ln ${position.line + 1}, Col ${position.character + 1}`),
        (error: unknown) => this.log.warn(`${CURSOR} failed: ${String(error)}`),
      );
  }

  dispose(): void {
    this.debounce.cancel();
  }
}
