# frozen_string_literal: true

require 'spec_helper'
require 'puppet_x/clone_army/runner'

# Real processes: the runner is what stands between Puppet and a helper that hangs.
describe PuppetX::CloneArmy::Runner do
  it 'keeps stdout and stderr apart and returns the exit status' do
    result = described_class.run(['/bin/sh', '-c', 'echo out; echo err >&2; exit 3'], timeout: 30)
    expect(result.to_a).to eq(["out\n", "err\n", 3, nil])
  end

  it 'says which signal ended a command that has no exit status' do
    result = described_class.run(['/bin/sh', '-c', 'kill -KILL $$'], timeout: 30)
    expect([result.exitstatus, result.termsig]).to eq([nil, 9])
  end

  it 'never goes through a shell, even for a lone program name with shell characters' do
    Dir.mktmpdir('clone-army-runner') do |dir|
      marker = File.join(dir, 'pwned')
      expect { described_class.run(["true; touch #{marker}"], timeout: 30) }.to raise_error(Errno::ENOENT)
      result = described_class.run(['/bin/echo', "$(touch #{marker})", ';', '|'], timeout: 30)
      expect(result.stdout).to eq("$(touch #{marker}) ; |\n")
      expect(File.exist?(marker)).to be false
    end
  end

  it 'stops a command at its deadline and says so' do
    started = Process.clock_gettime(Process::CLOCK_MONOTONIC)
    expect { described_class.run(['/bin/sleep', '60'], timeout: 1) }
      .to raise_error(PuppetX::CloneArmy::Runner::Timeout, %r{/bin/sleep did not finish within 1 s})
    expect(Process.clock_gettime(Process::CLOCK_MONOTONIC) - started).to be < 20
  end

  it 'kills a command that ignores TERM' do
    stub_const('PuppetX::CloneArmy::Runner::GRACE', 1)
    expect { described_class.run(['/bin/sh', '-c', 'trap "" TERM; sleep 60'], timeout: 1) }
      .to raise_error(PuppetX::CloneArmy::Runner::Timeout)
  end
end
