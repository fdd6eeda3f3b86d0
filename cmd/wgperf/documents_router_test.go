//go:build router

package main

// labKinds are the kinds only a build with the lab (and the drop sampler)
// prints: the router build has no "lab run", "lab status" or "drops".
var labKinds = []string{"lab-run", "lab-status", "drops"}

func (m *docMaker) labDocs() {}
