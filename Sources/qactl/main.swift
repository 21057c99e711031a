print("qactl")
