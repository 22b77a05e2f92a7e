scenario{name="x", cluster={nodes=3, bogus=1}}
