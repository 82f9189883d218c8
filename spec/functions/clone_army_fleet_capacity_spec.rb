# frozen_string_literal: true

require 'spec_helper'

describe 'clone_army::fleet_capacity' do
  gib = 1024 * 1024 * 1024
  on_cpu = 'one run every 1800 s a clone at 2.5 CPU-s a run within 75 % of 2 cores'

  it 'is bound by CPU for timer clones on 2 cores at 1800 s' do
    is_expected.to run.with_params(24 * gib, 2, 'timer', 1800, 75, 2.5)
                      .and_return('clones' => 1080, 'bound' => 'cpu', 'memory' => 1126, 'cpu' => 1080, 'reason' => on_cpu)
  end

  it 'is bound by memory for daemon clones' do
    is_expected.to run.with_params(24 * gib, 2, 'daemon', 1800, 75, 2.5)
                      .and_return('clones' => 225, 'bound' => 'memory', 'memory' => 225, 'cpu' => 1080,
                                  'reason' => 'total memory minus 2048 MiB, divided by 100 MiB a clone in daemon mode')
  end

  it 'gives manual clones no CPU bound' do
    is_expected.to run.with_params(24 * gib, 2, 'manual', 60, 75, 2.5)
                      .and_return('clones' => 1126, 'bound' => 'memory', 'memory' => 1126, 'cpu' => nil,
                                  'reason' => 'total memory minus 2048 MiB, divided by 20 MiB a clone in manual mode')
  end

  it "takes the helper's share and CPU figure for undef" do
    is_expected.to run.with_params(24 * gib, 2, 'timer', 1800, nil, nil)
                      .and_return('clones' => 1080, 'bound' => 'cpu', 'memory' => 1126, 'cpu' => 1080, 'reason' => on_cpu)
  end

  it 'counts a role that costs more CPU a run' do
    is_expected.to run.with_params(24 * gib, 2, 'timer', 1800, 75, 10)
                      .and_return('clones' => 270, 'bound' => 'cpu', 'memory' => 1126, 'cpu' => 270,
                                  'reason' => 'one run every 1800 s a clone at 10 CPU-s a run within 75 % of 2 cores')
  end

  it { is_expected.to run.with_params(24 * gib, 2, 'timer', 1800, 0, 2.5).and_raise_error(ArgumentError, %r{cpu_share_percent}) }
  it { is_expected.to run.with_params(24 * gib, 2, 'timer', 1800, 101, 2.5).and_raise_error(ArgumentError, %r{cpu_share_percent}) }
  it { is_expected.to run.with_params(24 * gib, 0, 'timer', 1800, 75, 2.5).and_raise_error(ArgumentError, %r{cores}) }

  it 'takes a host without a core count as one core, and says so' do
    reason = 'one run every 1800 s a clone at 2.5 CPU-s a run within 75 % of 1 core (assumed: no processor count)'
    is_expected.to run.with_params(24 * gib, nil, 'timer', 1800, nil, nil)
                      .and_return('clones' => 540, 'bound' => 'cpu', 'memory' => 1126, 'cpu' => 540, 'reason' => reason)
  end
  it { is_expected.to run.with_params(24 * gib, 2, 'timer', 1800, 75, 0).and_raise_error(ArgumentError, %r{cpu_seconds_per_run}) }
end
