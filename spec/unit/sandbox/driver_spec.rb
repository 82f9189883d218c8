# frozen_string_literal: true

require 'tmpdir'
require_relative '../../../sandbox/driver'

describe SandboxDriver do
  it 'polls until the block answers, and gives up with nil after the timeout' do
    answers = [nil, false, 'up']
    expect(described_class.wait_for(timeout: 5, interval: 0) { answers.shift }).to eq('up')
    calls = 0
    gave_up = described_class.wait_for(timeout: 0.05, interval: 0.01) do
      calls += 1
      nil
    end
    expect(gave_up).to be_nil
    expect(calls).to be > 1
  end

  it 'finds mounts left below a sandbox, not below another whose name starts the same' do
    dir = described_class.state_dir('bench')
    plain = "36 1 0:50 / #{described_class.state_dir('benchplain')}/root rw - overlay overlay rw\n"
    expect(described_class.mounts_left?('bench', mountinfo: plain)).to be(false)
    expect(described_class.mounts_left?('bench', mountinfo: "#{plain}37 1 0:51 / #{dir}/root rw - overlay overlay rw\n"))
      .to be(true)
  end

  it 'reports a command that is refused by sandbox.sh as a failed Result, not an exception' do
    result = described_class.exec('no-such-sandbox-here', 'true', timeout: 10, env: { 'SANDBOX_CACHE' => Dir.tmpdir })
    expect(result.success?).to be(false)
    expect(result.command).to eq('true')
  end
end
