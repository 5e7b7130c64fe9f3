// The `redraft.*` settings, read once per use with their package.json defaults.

import * as vscode from "vscode";

import { DEFAULT_LANGUAGES, type Settings } from "./logic";

export interface ExtensionSettings extends Settings {
  enabled: boolean;
  languages: string[];
  nextEdit: boolean;
  debounceMs: number;
  announceCursor: boolean;
}

export function readSettings(): ExtensionSettings {
  const config = vscode.workspace.getConfiguration("redraft");
  return {
    serverPath: config.get<string>("serverPath", ""),
    confidenceThreshold: config.get<number>("confidenceThreshold", 0.75),
    nextEditConfidenceThreshold: config.get<number>("nextEditConfidenceThreshold", 0.5),
    requestTimeoutMs: config.get<number>("requestTimeoutMs", 2000),
    serverOptions: config.get<Record<string, unknown>>("serverOptions", {}),
    enabled: config.get<boolean>("enabled", true),
    languages: config.get<string[]>("languages", [...DEFAULT_LANGUAGES]),
    nextEdit: config.get<boolean>("nextEdit.enabled", true),
    debounceMs: config.get<number>("nextEdit.debounceMs", 300),
    announceCursor: config.get<boolean>("announceCursor", true),
  };
}

/** Settings whose change needs a new server (a new command line or document selector). */
export const RESTART_KEYS = ["redraft.serverPath", "redraft.languages", "redraft.enabled"];
