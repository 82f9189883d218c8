# frozen_string_literal: true

require 'spec_helper'

describe 'clone_army::given_server' do
  it { is_expected.to run.with_params('puppet.example.com', nil).and_return('puppet.example.com') }
  it { is_expected.to run.with_params(nil, nil).and_return(nil) }
  it { is_expected.to run.with_params('puppet.example.com', 'puppet.example.com').and_return('puppet.example.com') }

  it 'takes master with a warning' do
    logs = []
    collector = Puppet::Test::LogCollector.new(logs)
    Puppet::Util::Log.newdestination(collector)
    begin
      expect(subject.execute(nil, 'old.example.com')).to eq('old.example.com')
    ensure
      Puppet::Util::Log.close(collector)
    end
    expect(logs.map(&:message)).to include('clone_army: master is deprecated, give server instead (the same value)')
  end

  it 'refuses a master that disagrees with server' do
    expect { subject.execute('new.example.com', 'old.example.com') }.to raise_error(
      Puppet::ParseError, %r{server => 'new.example.com' and master => 'old.example.com' disagree}
    )
  end
end
