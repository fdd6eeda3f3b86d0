//go:build router

package main

// labKinds are the kinds only a build with the lab prints: the router build
// has no "lab run" and no "fix ecmp --apply".
var labKinds = []string{"lab-run", "fix-ecmp"}

func (m *docMaker) labDocs() {}
