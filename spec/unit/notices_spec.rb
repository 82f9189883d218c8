# frozen_string_literal: true

require 'spec_helper'
require 'open3'
require 'tmpdir'

# scripts/check-notices.sh (`make lint`) holds THIRD-PARTY-NOTICES.md to the crates
# `cargo tree` says the helper links: these examples run it on copies of the committed
# file with a crate's row dropped, a version changed and a crate added, which must fail
# naming each and saying what to run.
describe 'scripts/check-notices.sh' do
  root = File.expand_path('../..', __dir__)
  notices = File.read(File.join(root, 'THIRD-PARTY-NOTICES.md'))
  check = lambda do |text|
    Dir.mktmpdir do |dir|
      path = File.join(dir, 'NOTICES.md')
      File.write(path, text)
      out, status = Open3.capture2e({ 'NOTICES_FILE' => path }, 'bash', File.join(root, 'scripts/check-notices.sh'))
      [out, status.exitstatus]
    end
  end
  # The rows of the committed file's table, by crate name.
  row_of = ->(name) { notices[%r{^\| #{Regexp.escape(name)} \| [^|]+ \| [^|]+ \|\n}] or raise "no row for #{name}" }

  it 'passes the committed file' do
    out, status = check.call(notices)
    expect([out, status]).to match([%r{names the \d+ crates the helper links}, 0])
  end

  it 'names the crates a stale file lacks or has too many of, and says to run make notices' do
    stale = notices.sub(row_of.call('libc'), '')
                   .sub(row_of.call('serde_json'), "| serde_json | 0.0.1 | MIT |\n")
                   .sub(row_of.call('zbus'), "#{row_of.call('zbus')}| left-pad | 1.0.0 | MIT |\n")
    out, status = check.call(stale)
    expect(status).to eq(1)
    expect(out).to include('linked, not in the notices: libc ', 'linked, not in the notices: serde_json ',
                           'in the notices, not linked: serde_json 0.0.1', 'in the notices, not linked: left-pad 1.0.0',
                           'run make notices')
    expect(out.scan(%r{^  (?:linked|in the notices)}).size).to eq(4)
  end

  it 'fails on a missing file, saying to run make notices' do
    out, status = Open3.capture2e({ 'NOTICES_FILE' => '/nonexistent/NOTICES.md' }, 'bash', File.join(root, 'scripts/check-notices.sh'))
    expect([out, status.exitstatus]).to match([%r{missing: run make notices}, 1])
  end
end
