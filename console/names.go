package console

import "slices"

// sortNames sorts child names (zkraft sends them sorted; ZooKeeper does
// not, and the page pages through them by offset).
func sortNames(names []string) { slices.Sort(names) }
