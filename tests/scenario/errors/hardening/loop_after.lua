-- issue 12 item 6: an endless loop after run().
scenario { name = "x" }
run(1 * s)
while true do end
