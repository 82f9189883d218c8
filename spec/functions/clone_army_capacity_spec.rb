# frozen_string_literal: true

require 'spec_helper'

describe 'clone_army::capacity' do
  gib = 1024 * 1024 * 1024

  it { is_expected.to run.with_params(24 * gib, 'daemon').and_return(225) }
  it { is_expected.to run.with_params(24 * gib, 'timer').and_return(1126) }
  it { is_expected.to run.with_params(2 * gib, 'daemon').and_return(0) }
  it { is_expected.to run.with_params(1 * gib, 'timer').and_return(0) }
  it { is_expected.to run.with_params(24 * gib, 'cron').and_raise_error(ArgumentError, %r{run_mode}) }
  it { is_expected.to run.with_params(-1, 'daemon').and_raise_error(ArgumentError, %r{total_bytes}) }
end
