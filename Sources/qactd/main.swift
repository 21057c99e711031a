print("qactd")
