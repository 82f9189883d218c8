# frozen_string_literal: true

# @summary A command line as a systemd unit's `ExecStart=` takes it, each word as it is.
#
# @api private
#
# systemd splits `ExecStart=` at spaces, unquotes double quotes with C-style
# escapes, and expands `%` specifiers and `$` variables. Each word is put in
# double quotes with `\`, `"`, `%` and `$` escaped, so a path with a space or
# a `%` in it stays one word and means itself. A word with a control
# character (a newline would end the setting) and a program that is not an
# absolute path are refused. Class clone_army's private clone_army::record
# writes the recorder's `ExecStart=` with it.
Puppet::Functions.create_function(:'clone_army::unit_command') do
  # @param argv
  #   The program (an absolute path) and its arguments.
  # @return [String] The value for `ExecStart=`.
  # @example
  #   clone_army::unit_command(['/usr/local/sbin/clone-army', 'record', '--output', '/var/log/x y.jsonl'])
  #   # '"/usr/local/sbin/clone-army" "record" "--output" "/var/log/x y.jsonl"'
  dispatch :unit_command do
    param 'Array[String, 1]', :argv
    return_type 'String'
  end

  def unit_command(argv)
    unless argv.first.start_with?('/')
      raise ArgumentError, "clone_army::unit_command: the program must be an absolute path, not #{argv.first.inspect}"
    end

    argv.map { |word| quote(word) }.join(' ')
  end

  def quote(word)
    if word.match?(%r{[\x00-\x1f\x7f]})
      raise ArgumentError, "clone_army::unit_command: #{word.inspect} has a control character, which a unit file cannot hold"
    end

    escaped = word.gsub(%r{[\\"]}) { |c| "\\#{c}" }.gsub('%', '%%').gsub('$', '$$')
    %("#{escaped}")
  end
end
