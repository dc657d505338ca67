package tools

// invalidateForBench drops ws's cached file list (BenchmarkSearch's cold
// variant).
func invalidateForBench(ws *Workspace) { ws.InvalidateFileList() }
