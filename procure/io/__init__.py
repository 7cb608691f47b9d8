"""Reading and writing files: the workspace, its importers and readers, outputs written atomically, caches."""
