"""Which files are indexed: stack packs (file types), hard exclusions, ignore files, file checks."""
