# frozen_string_literal: true

require 'spec_helper'

describe 'Clone_army::Run_mode' do
  it { is_expected.to allow_values('daemon', 'timer', 'manual', 'apply') }
  it { is_expected.not_to allow_values('cron', 'Daemon', 'masterless', :undef) }
end
