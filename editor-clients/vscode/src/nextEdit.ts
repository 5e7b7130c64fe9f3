// Next edits: after a change, `redraft/nextEdit` is asked; its top proposal is drawn where
// it applies (struck-through deletion, ghost insertion, gutter marker), Tab jumps there then
// accepts, Esc dismisses, and the server is told which (`redraft/feedback`).

import * as vscode from "vscode";
import type { LanguageClient } from "vscode-languageclient/node";

import { NextEditDecorations } from "./decorations";
import { Debouncer, firstNextEdit, isCurrent, type NextEditItem, planNextEdit, serverOffers } from "./logic";
import { readSettings } from "./settings";

const NEXT_EDIT = "redraft/nextEdit";
const FEEDBACK = "redraft/feedback";
const VISIBLE_KEY = "redraft.nextEditVisible";

interface Shown {
  editor: vscode.TextEditor;
  item: NextEditItem;
  range: vscode.Range;
}

/** The status bar belongs to the server's lifecycle; next edits only report to it. */
export interface NextEditStatus {
  /** A `redraft/nextEdit` round trip took this long: the status bar shows it from its next update. */
  recordLatency(ms: number): void;
  /** The shown proposal (`NextEdits.shownLine`) or the latency changed. */
  update(): void;
}

export class NextEdits implements vscode.Disposable {
  private shown: Shown | undefined;
  private requestSeq = 0;
  private readonly decorations: NextEditDecorations;
  private readonly debounce = new Debouncer(() => void this.request());

  constructor(
    extensionUri: vscode.Uri,
    private readonly client: () => LanguageClient | undefined,
    private readonly log: vscode.LogOutputChannel,
    private readonly status: NextEditStatus,
  ) {
    this.decorations = new NextEditDecorations(extensionUri);
  }

  /** The line of the proposal shown (0-based), for the status bar. */
  get shownLine(): number | undefined {
    return this.shown?.range.start.line;
  }

  onDocumentChanged(event: vscode.TextDocumentChangeEvent): void {
    const editor = vscode.window.activeTextEditor;
    if (editor === undefined || event.document !== editor.document || event.contentChanges.length === 0) {
      return;
    }
    this.clear(); // its range was for the text before this change
    const settings = readSettings();
    if (settings.enabled && settings.nextEdit && settings.languages.includes(event.document.languageId)) {
      this.debounce.schedule(settings.debounceMs);
    }
  }

  private async request(): Promise<void> {
    const editor = vscode.window.activeTextEditor;
    const client = this.client();
    if (editor === undefined || client === undefined || !client.isRunning() ||
        !serverOffers(client.initializeResult?.capabilities.experimental, "requests", NEXT_EDIT)) {
      return;
    }
    const seq = ++this.requestSeq;
    const document = editor.document;
    const version = document.version;
    const started = Date.now();
    let result: unknown;
    try {
      result = await client.sendRequest(NEXT_EDIT, {
        textDocument: { uri: client.code2ProtocolConverter.asUri(document.uri) },
        position: client.code2ProtocolConverter.asPosition(editor.selection.active),
      });
    } catch (error) {
      this.log.warn(`${NEXT_EDIT} failed: ${String(error)}`);
      return;
    }
    if (seq !== this.requestSeq || vscode.window.activeTextEditor !== editor || document.version !== version) {
      return; // a newer change or request came meanwhile
    }
    this.status.recordLatency(Date.now() - started);
    const item = firstNextEdit(result);
    const sameDocument = item?.textDocument?.uri === client.code2ProtocolConverter.asUri(document.uri);
    if (item === undefined || !sameDocument || !isCurrent(item, version)) {
      this.status.update();
      return;
    }
    this.show(editor, item);
  }

  private show(editor: vscode.TextEditor, item: NextEditItem): void {
    const client = this.client();
    if (client === undefined) {
      return;
    }
    const range = client.protocol2CodeConverter.asRange(item.edit.range);
    const plan = planNextEdit(item, client.code2ProtocolConverter.asPosition(editor.selection.active));
    this.shown = { editor, item, range };
    this.decorations.draw(editor, {
      deleted: plan.deleted ? range : undefined,
      insertAt: client.protocol2CodeConverter.asPosition(plan.insertAt),
      ghost: plan.insertedLines.join(" ⏎ "),
      gutterAt: plan.awayFromCursor ? range.start : undefined,
    });
    void vscode.commands.executeCommand("setContext", VISIBLE_KEY, true);
    this.status.update();
  }

  /** Hides the proposal and drops a request not yet sent, without telling the server. */
  clear(): void {
    this.debounce.cancel();
    const shown = this.shown;
    this.shown = undefined;
    if (shown !== undefined) {
      this.decorations.clear(shown.editor);
    }
    void vscode.commands.executeCommand("setContext", VISIBLE_KEY, false);
    this.status.update();
  }

  private feedback(item: NextEditItem, accepted: boolean): void {
    const client = this.client();
    if (client !== undefined && serverOffers(client.initializeResult?.capabilities.experimental, "notifications", FEEDBACK)) {
      void client.sendNotification(FEEDBACK, { id: item.id, accepted });
    }
  }

  jump(): boolean {
    const shown = this.shown;
    if (shown === undefined || vscode.window.activeTextEditor !== shown.editor) {
      return false;
    }
    shown.editor.selection = new vscode.Selection(shown.range.start, shown.range.start);
    shown.editor.revealRange(shown.range, vscode.TextEditorRevealType.InCenterIfOutsideViewport);
    this.decorations.hideGutter(shown.editor);
    return true;
  }

  async accept(): Promise<boolean> {
    const shown = this.shown;
    if (shown === undefined || vscode.window.activeTextEditor !== shown.editor) {
      return false;
    }
    this.clear();
    const applied = await shown.editor.edit((builder) => builder.replace(shown.range, shown.item.edit.newText));
    if (applied) {
      const end = shown.editor.document.positionAt(
        shown.editor.document.offsetAt(shown.range.start) + shown.item.edit.newText.length,
      );
      shown.editor.selection = new vscode.Selection(end, end);
      this.feedback(shown.item, true);
    }
    return applied;
  }

  async jumpOrAccept(): Promise<void> {
    const shown = this.shown;
    if (shown === undefined) {
      return;
    }
    const cursor = shown.editor.selection.active;
    const atEdit = cursor.line >= shown.range.start.line && cursor.line <= shown.range.end.line;
    if (atEdit) {
      await this.accept();
    } else {
      this.jump();
    }
  }

  /** Another editor took focus: hide the proposal without telling the server it was refused. */
  dismissSilently(): void {
    this.clear();
  }

  dismiss(): void {
    const shown = this.shown;
    if (shown !== undefined) {
      this.clear();
      this.feedback(shown.item, false);
    }
  }

  dispose(): void {
    this.debounce.cancel();
    this.decorations.dispose();
  }
}
