print("canopy-bench: scenarios come next")
