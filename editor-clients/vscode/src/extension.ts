// Redraft for VS Code: starts `redraft serve` through vscode-languageclient (which brings
// LSP inline completions — ghost text — by itself), and adds next edits: after a change,
// `redraft/nextEdit` is asked; its top proposal is drawn where it applies (struck-through
// deletion, ghost insertion, gutter marker), Tab jumps there then accepts, Esc dismisses.

import * as vscode from "vscode";
import {
  LanguageClient,
  type LanguageClientOptions,
  type ServerOptions,
  State,
} from "vscode-languageclient/node";

import { NextEditDecorations } from "./decorations";
import {
  Debouncer,
  firstNextEdit,
  findServer,
  isCurrent,
  type NextEditItem,
  planNextEdit,
  serverCandidates,
  serverOptions,
  type ServerState,
  statusText,
} from "./logic";
import { readSettings, RESTART_KEYS } from "./settings";

const NEXT_EDIT = "redraft/nextEdit";
const FEEDBACK = "redraft/feedback";
const VISIBLE_KEY = "redraft.nextEditVisible";

interface Shown {
  editor: vscode.TextEditor;
  item: NextEditItem;
  range: vscode.Range;
}

class Redraft implements vscode.Disposable {
  private client: LanguageClient | undefined;
  private state: ServerState = "starting";
  private lastLatencyMs: number | undefined;
  private shown: Shown | undefined;
  private requestSeq = 0;
  private readonly status = vscode.window.createStatusBarItem(vscode.StatusBarAlignment.Right, 100);
  private readonly decorations: NextEditDecorations;
  private readonly nextEditDebounce = new Debouncer(() => void this.requestNextEdit());
  private readonly disposables: vscode.Disposable[] = [];

  constructor(
    context: vscode.ExtensionContext,
    private readonly log: vscode.LogOutputChannel,
  ) {
    this.decorations = new NextEditDecorations(context.extensionUri);
    this.status.command = "redraft.showLog";
    this.status.show();
    this.disposables.push(this.status, this.decorations);
  }

  private updateStatus(): void {
    const { text, tooltip } = statusText(this.state, this.lastLatencyMs, this.shown?.range.start.line);
    this.status.text = text;
    this.status.tooltip = tooltip;
  }

  private setState(state: ServerState): void {
    this.state = state;
    this.updateStatus();
  }

  async start(): Promise<void> {
    const settings = readSettings();
    if (!settings.enabled) {
      this.setState("disabled");
      return;
    }
    this.setState("starting");
    const folders = (vscode.workspace.workspaceFolders ?? []).map((f) => f.uri.fsPath);
    const command = findServer(serverCandidates(settings.serverPath, folders, process.env.PATH ?? ""));
    if (command === undefined) {
      this.setState("stopped");
      const message = settings.serverPath
        ? `Redraft: the server '${settings.serverPath}' (setting redraft.serverPath) is not an executable file.`
        : "Redraft: no 'redraft' executable in the workspace's .venv or on PATH; set redraft.serverPath.";
      this.log.error(message);
      void vscode.window.showErrorMessage(message);
      return;
    }
    this.log.info(`starting ${command} serve`);
    const server: ServerOptions = { command, args: ["serve"] };
    const clientOptions: LanguageClientOptions = {
      documentSelector: settings.languages.map((language) => ({ language })),
      initializationOptions: serverOptions(settings),
      outputChannel: this.log,
      middleware: {
        // Time every inline-completion round trip for the status bar.
        provideInlineCompletionItems: async (document, position, context, token, next) => {
          const started = Date.now();
          const result = await next(document, position, context, token);
          this.lastLatencyMs = Date.now() - started;
          this.updateStatus();
          return result;
        },
      },
    };
    const client = new LanguageClient("redraft", "Redraft", server, clientOptions);
    this.client = client;
    client.onDidChangeState((event) => {
      if (event.newState === State.Stopped) {
        this.setState("stopped");
      }
    });
    client.onNotification("window/showMessage", (params: { type: number; message: string }) => {
      if (params.type === 1 && /model|weights|tokenizer/i.test(params.message)) {
        this.setState("no-model");
      }
    });
    try {
      await client.start();
      if (this.state === "starting") {
        this.setState("ready");
      }
    } catch (error) {
      this.setState("stopped");
      this.log.error(`the server failed to start: ${String(error)}`);
      void vscode.window.showErrorMessage(`Redraft: the server failed to start (${String(error)}). See the log.`);
    }
  }

  async stop(): Promise<void> {
    this.clearNextEdit();
    const client = this.client;
    this.client = undefined;
    if (client !== undefined) {
      try {
        await client.stop(5000);
      } catch (error) {
        this.log.warn(`stopping the server: ${String(error)}`);
      }
    }
  }

  async restart(): Promise<void> {
    await this.stop();
    await this.start();
  }

  onConfigurationChanged(event: vscode.ConfigurationChangeEvent): void {
    if (!event.affectsConfiguration("redraft")) {
      return;
    }
    const restartNeeded = RESTART_KEYS.some((key) => event.affectsConfiguration(key));
    if (restartNeeded) {
      void this.restart();
      return;
    }
    const client = this.client;
    if (client === undefined) {
      return;
    }
    const options = serverOptions(readSettings());
    client.sendNotification("workspace/didChangeConfiguration", { settings: { redraft: options } }).then(
      () => this.log.info(`settings sent to the server: ${JSON.stringify(options)}`),
      (error: unknown) => this.log.warn(`sending settings to the server: ${String(error)}`),
    );
  }

  // --- next edit -------------------------------------------------------------------

  onDocumentChanged(event: vscode.TextDocumentChangeEvent): void {
    const editor = vscode.window.activeTextEditor;
    if (editor === undefined || event.document !== editor.document || event.contentChanges.length === 0) {
      return;
    }
    this.clearNextEdit(); // its range was for the text before this change
    const settings = readSettings();
    if (settings.enabled && settings.nextEdit && settings.languages.includes(event.document.languageId)) {
      this.nextEditDebounce.schedule(settings.debounceMs);
    }
  }

  private async requestNextEdit(): Promise<void> {
    const editor = vscode.window.activeTextEditor;
    const client = this.client;
    if (editor === undefined || client === undefined || !client.isRunning()) {
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
    this.lastLatencyMs = Date.now() - started;
    const item = firstNextEdit(result);
    const sameDocument = item?.textDocument?.uri === client.code2ProtocolConverter.asUri(document.uri);
    if (item === undefined || !sameDocument || !isCurrent(item, version)) {
      this.updateStatus();
      return;
    }
    this.showNextEdit(editor, item);
  }

  private showNextEdit(editor: vscode.TextEditor, item: NextEditItem): void {
    const client = this.client;
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
    this.updateStatus();
  }

  private clearNextEdit(): void {
    this.nextEditDebounce.cancel();
    const shown = this.shown;
    this.shown = undefined;
    if (shown !== undefined) {
      this.decorations.clear(shown.editor);
    }
    void vscode.commands.executeCommand("setContext", VISIBLE_KEY, false);
    this.updateStatus();
  }

  private feedback(item: NextEditItem, accepted: boolean): void {
    void this.client?.sendNotification(FEEDBACK, { id: item.id, accepted });
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
    this.clearNextEdit();
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
    this.clearNextEdit();
  }

  dismiss(): void {
    const shown = this.shown;
    if (shown !== undefined) {
      this.clearNextEdit();
      this.feedback(shown.item, false);
    }
  }

  async toggle(): Promise<void> {
    const config = vscode.workspace.getConfiguration("redraft");
    await config.update("enabled", !config.get<boolean>("enabled", true), vscode.ConfigurationTarget.Global);
  }

  dispose(): void {
    this.nextEditDebounce.cancel();
    for (const disposable of this.disposables) {
      disposable.dispose();
    }
  }
}

let redraft: Redraft | undefined;

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  const log = vscode.window.createOutputChannel("Redraft", { log: true });
  const instance = new Redraft(context, log);
  redraft = instance;
  context.subscriptions.push(
    log,
    instance,
    vscode.commands.registerCommand("redraft.restart", () => instance.restart()),
    vscode.commands.registerCommand("redraft.toggle", () => instance.toggle()),
    vscode.commands.registerCommand("redraft.showLog", () => log.show()),
    vscode.commands.registerCommand("redraft.nextEdit.jumpOrAccept", () => instance.jumpOrAccept()),
    vscode.commands.registerCommand("redraft.nextEdit.jump", () => instance.jump()),
    vscode.commands.registerCommand("redraft.nextEdit.accept", () => instance.accept()),
    vscode.commands.registerCommand("redraft.nextEdit.dismiss", () => instance.dismiss()),
    vscode.workspace.onDidChangeTextDocument((event) => instance.onDocumentChanged(event)),
    vscode.workspace.onDidChangeConfiguration((event) => instance.onConfigurationChanged(event)),
    vscode.window.onDidChangeActiveTextEditor(() => instance.dismissSilently()),
  );
  await instance.start();
}

export async function deactivate(): Promise<void> {
  await redraft?.stop();
  redraft = undefined;
}
