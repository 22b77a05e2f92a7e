-- issue 12 item 6: pcall cannot keep the timeout.
scenario { name = "x" }
run(1 * s)
while true do
  pcall(function() while true do end end)
end
