// Redraft for VS Code: starts `redraft serve` through vscode-languageclient (which brings
// LSP inline completions — ghost text — by itself), sends it the `redraft.*` settings, shows
// its state in the status bar, and adds next edits (nextEdit.ts) and tells the server where
// the cursor rests (cursor.ts).

import * as vscode from "vscode";
import {
  LanguageClient,
  type LanguageClientOptions,
  type ServerOptions,
  State,
} from "vscode-languageclient/node";

import { findServer, serverCandidates, serverOptions, type ServerState, statusText } from "./logic";
import { CursorAnnouncer } from "./cursor";
import { NextEdits } from "./nextEdit";
import { readSettings, RESTART_KEYS } from "./settings";

class Redraft implements vscode.Disposable {
  private client: LanguageClient | undefined;
  private state: ServerState = "starting";
  private lastLatencyMs: number | undefined;
  private readonly status = vscode.window.createStatusBarItem(vscode.StatusBarAlignment.Right, 100);
  readonly nextEdits: NextEdits;
  readonly cursor: CursorAnnouncer;
  private readonly disposables: vscode.Disposable[] = [];

  constructor(
    context: vscode.ExtensionContext,
    private readonly log: vscode.LogOutputChannel,
  ) {
    this.nextEdits = new NextEdits(context.extensionUri, () => this.client, log, {
      recordLatency: (ms) => {
        this.lastLatencyMs = ms;
      },
      update: () => this.updateStatus(),
    });
    this.cursor = new CursorAnnouncer(() => this.client, log);
    this.status.command = "redraft.showLog";
    this.status.show();
    this.disposables.push(this.status, this.nextEdits, this.cursor);
  }

  private updateStatus(): void {
    const { text, tooltip } = statusText(this.state, this.lastLatencyMs, this.nextEdits.shownLine);
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
    this.nextEdits.clear();
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

  async toggle(): Promise<void> {
    const config = vscode.workspace.getConfiguration("redraft");
    await config.update("enabled", !config.get<boolean>("enabled", true), vscode.ConfigurationTarget.Global);
  }

  dispose(): void {
    for (const disposable of this.disposables) {
      disposable.dispose();
    }
  }
}

let redraft: Redraft | undefined;

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  const log = vscode.window.createOutputChannel("Redraft", { log: true });
  const instance = new Redraft(context, log);
  const nextEdits = instance.nextEdits;
  redraft = instance;
  context.subscriptions.push(
    log,
    instance,
    vscode.commands.registerCommand("redraft.restart", () => instance.restart()),
    vscode.commands.registerCommand("redraft.toggle", () => instance.toggle()),
    vscode.commands.registerCommand("redraft.showLog", () => log.show()),
    vscode.commands.registerCommand("redraft.nextEdit.jumpOrAccept", () => nextEdits.jumpOrAccept()),
    vscode.commands.registerCommand("redraft.nextEdit.jump", () => nextEdits.jump()),
    vscode.commands.registerCommand("redraft.nextEdit.accept", () => nextEdits.accept()),
    vscode.commands.registerCommand("redraft.nextEdit.dismiss", () => nextEdits.dismiss()),
    vscode.workspace.onDidChangeTextDocument((event) => {
      instance.cursor.onDocumentChanged(event);
      nextEdits.onDocumentChanged(event);
    }),
    vscode.window.onDidChangeTextEditorSelection((event) => instance.cursor.onSelectionChanged(event)),
    vscode.workspace.onDidChangeConfiguration((event) => instance.onConfigurationChanged(event)),
    vscode.window.onDidChangeActiveTextEditor(() => nextEdits.dismissSilently()),
  );
  await instance.start();
}

export async function deactivate(): Promise<void> {
  await redraft?.stop();
  redraft = undefined;
}
