-- issue 12 item 6: an endless loop before scenario{}.
while true do end
