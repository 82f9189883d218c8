# frozen_string_literal: true

require 'spec_helper'

describe 'clone_army::unit_command' do
  it 'quotes every word' do
    is_expected.to run.with_params(['/usr/local/sbin/clone-army', 'record', '--every', '10'])
                      .and_return('"/usr/local/sbin/clone-army" "record" "--every" "10"')
  end

  # systemd would split at the space, expand %h and $HOME, and end the quote at ".
  it 'keeps spaces, specifiers, variables, quotes and backslashes as they are' do
    is_expected.to run.with_params(['/opt/my tools/clone-army', '%h', '$HOME', 'a"b', 'c\\d'])
                      .and_return('"/opt/my tools/clone-army" "%%h" "$$HOME" "a\\"b" "c\\\\d"')
  end

  it 'refuses a word with a newline' do
    is_expected.to run.with_params(['/usr/local/sbin/clone-army', "x\nExecStartPre=/bin/sh"])
                      .and_raise_error(ArgumentError, %r{control character})
  end

  it 'refuses a program that is not an absolute path' do
    is_expected.to run.with_params(['clone-army']).and_raise_error(ArgumentError, %r{absolute path})
  end
end
