-- An integral number beyond 64 bits in an integer option is out of range, not "a fraction".
scenario { name = "x", cluster = { nodes = 2^63 } }
